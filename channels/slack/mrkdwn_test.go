package slack

import (
	"strings"
	"testing"
)

func TestToMrkdwn(t *testing.T) {
	for _, tc := range []struct{ md, want string }{
		{"**bold** and *italic* and ~~gone~~", "*bold* and _italic_ and ~gone~"},
		{"[docs](https://example.com/a?b=1) and https://x.test", "<https://example.com/a?b=1|docs> and https://x.test"},
		{"a < b && c > d", "a &lt; b &amp;&amp; c &gt; d"},
		{"`x<y`", "`x&lt;y`"},
		{"```go\nif a < b {}\n```", "```\nif a &lt; b {}\n```"},
		{"# Title\n\n- one\n- two", "*Title*\n\n• one\n• two"},
		{"> quoted", "> quoted"},
		{"| a | b |\n|---|---|\n| 1 | 2 |", "*a — b*\n• 1 — 2"},
		{"[x|y](https://e.test)", "<https://e.test|x¦y>"},
	} {
		if got := toMrkdwn(tc.md); got != tc.want {
			t.Errorf("toMrkdwn(%q) = %q, want %q", tc.md, got, tc.want)
		}
	}
}

// Long replies are cut under Slack's limit on paragraph boundaries, and a
// cut code block is closed and reopened.
func TestMessagesChunk(t *testing.T) {
	code := "```\n" + strings.Repeat("line of code\n", 600) + "```"
	got := messages("intro\n\n" + code)
	if len(got) < 2 {
		t.Fatalf("%d messages", len(got))
	}
	for i, m := range got {
		if len([]rune(m)) > maxChunk || strings.Count(m, "```")%2 != 0 {
			t.Errorf("message %d: %d characters, %d fences", i, len([]rune(m)), strings.Count(m, "```"))
		}
	}
}

func TestPlainIncoming(t *testing.T) {
	got := plain("<@UBOT0001> see <https://a.test|the page> and <mailto:x@y.test> &amp; ask <@UBOB>", "UBOT0001")
	if want := "see the page (https://a.test) and mailto:x@y.test & ask @UBOB"; got != want {
		t.Fatalf("plain = %q, want %q", got, want)
	}
}

func TestConfigValidate(t *testing.T) {
	ok := Config{BotToken: "xoxb-1", AppToken: "xapp-1", APIURL: "https://slack.com/api/", KeepAlive: 1, StallGrace: 1}
	if err := ok.Validate(); err != nil {
		t.Fatal(err)
	}
	for name, mut := range map[string]func(*Config){
		"SLACK_APP_TOKEN":  func(c *Config) { c.AppToken = "" },
		"not a bot token":  func(c *Config) { c.BotToken = "xoxp-user" },
		"not an app-level": func(c *Config) { c.AppToken = "xoxb-1" },
		"SLACK_API_URL":    func(c *Config) { c.APIURL = "slack.com" },
		"SLACK_KEEPALIVE":  func(c *Config) { c.KeepAlive = 0 },
	} {
		c := ok
		mut(&c)
		if err := c.Validate(); err == nil || !strings.Contains(err.Error(), name) || strings.Contains(err.Error(), "xoxp-user") {
			t.Errorf("%s: %v", name, err)
		}
	}
	var ids UserIDs
	if err := ids.UnmarshalText([]byte("U1AB, W2CD ,")); err != nil || len(ids) != 2 || ids[1] != "W2CD" {
		t.Fatalf("ids %v, %v", ids, err)
	}
	if err := ids.UnmarshalText([]byte("alice")); err == nil {
		t.Fatal("a name was taken for a member id")
	}
}
