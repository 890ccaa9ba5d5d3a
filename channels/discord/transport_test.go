package discord

import (
	"net/http"
	"net/url"
	"testing"
)

type recordTrip struct{ got *http.Request }

func (r *recordTrip) RoundTrip(req *http.Request) (*http.Response, error) {
	r.got = req
	return &http.Response{StatusCode: http.StatusNoContent, Body: http.NoBody, Request: req}, nil
}

// discordgo's requests to discord.com go to the configured base, path
// prefix included; other hosts (the CDN, a double's files) are left alone.
func TestRewriteSendsDiscordToTheBase(t *testing.T) {
	for _, tc := range []struct{ base, in, want string }{
		{"http://127.0.0.1:9/", "https://discord.com/api/v9/users/@me", "http://127.0.0.1:9/api/v9/users/@me"},
		{"https://proxy.example/discord", "https://discord.com/api/v9/gateway", "https://proxy.example/discord/api/v9/gateway"},
		{"https://discord.com", "https://discord.com/api/v9/gateway", "https://discord.com/api/v9/gateway"},
		{"http://127.0.0.1:9", "https://cdn.discordapp.com/attachments/1/2/a.png", "https://cdn.discordapp.com/attachments/1/2/a.png"},
	} {
		base, _ := url.Parse(tc.base)
		rec := &recordTrip{}
		req, _ := http.NewRequest(http.MethodGet, tc.in, nil)
		resp, err := rewrite{base: base, next: rec}.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
		if got := rec.got.URL.String(); got != tc.want {
			t.Errorf("base %s: %s went to %s, want %s", tc.base, tc.in, got, tc.want)
		}
	}
}
