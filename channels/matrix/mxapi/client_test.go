package mxapi

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// A refusal is an *Error with the status, the Matrix code and the wait
// a 429 asks for (retry_after_ms, else Retry-After); the token goes in
// the Authorization header, never in a URL or an error.
func TestErrors(t *testing.T) {
	for _, tc := range []struct {
		name, header, body string
		status             int
		want               Error
	}{
		{"429 with retry_after_ms", "", `{"errcode":"M_LIMIT_EXCEEDED","error":"slow down","retry_after_ms":1500}`, 429,
			Error{Status: 429, Code: "M_LIMIT_EXCEEDED", Message: "slow down", RetryAfter: 1500 * time.Millisecond}},
		{"429 with Retry-After", "3", `{"errcode":"M_LIMIT_EXCEEDED"}`, 429, Error{Status: 429, Code: "M_LIMIT_EXCEEDED", RetryAfter: 3 * time.Second}},
		{"502 from a proxy", "", `<html>bad gateway</html>`, 502, Error{Status: 502}},
		{"401", "", `{"errcode":"M_UNKNOWN_TOKEN","error":"Unknown token"}`, 401, Error{Status: 401, Code: "M_UNKNOWN_TOKEN", Message: "Unknown token"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.Header.Get("Authorization") != "Bearer syt_secret" || strings.Contains(r.URL.String(), "syt_secret") {
					t.Errorf("request %s with %q", r.URL, r.Header.Get("Authorization"))
				}
				if tc.header != "" {
					w.Header().Set("Retry-After", tc.header)
				}
				w.WriteHeader(tc.status)
				_, _ = w.Write([]byte(tc.body))
			}))
			defer srv.Close()
			_, err := New(srv.URL+"/", "@omega:example.org", "syt_secret").Sync(t.Context(), "s1", time.Second)
			var e *Error
			if !errors.As(err, &e) || *e != tc.want || strings.Contains(err.Error(), "syt_secret") {
				t.Fatalf("error %#v (%v), want %#v", e, err, tc.want)
			}
		})
	}
}

func TestMessageText(t *testing.T) {
	reply := &Message{Body: "> <@bob:x.org> earlier\n> more\n\nmy answer", RelatesTo: &RelatesTo{}}
	reply.RelatesTo.InReplyTo = &struct {
		EventID string `json:"event_id"`
	}{"$e"}
	if got := reply.Text(); got != "my answer" {
		t.Errorf("reply text %q", got)
	}
	if got := (&Message{Body: "> a quote of my own\n\nand text"}).Text(); got != "> a quote of my own\n\nand text" {
		t.Errorf("a quote that is no reply was cut: %q", got)
	}
	if got := (&Message{Body: "sunset", FileName: "IMG_1.jpg"}).Caption(); got != "sunset" {
		t.Errorf("caption %q", got)
	}
	if got := (&Message{Body: "IMG_1.jpg"}).Caption(); got != "" {
		t.Errorf("a file name taken as a caption: %q", got)
	}
}
