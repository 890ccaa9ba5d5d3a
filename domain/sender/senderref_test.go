package sender

import (
	"strings"
	"testing"
)

func TestSenderKey(t *testing.T) {
	long := strings.Repeat("9", 3000)
	cases := []struct {
		name, channel, id string
		check             func(string) bool
	}{
		{"ordinary unchanged", "telegram", "42", func(k string) bool { return k == "telegram-42" }},
		{"NUL replaced", "http", "a\x00b", func(k string) bool { return k == "http-a\uFFFDb" }},
		{"long bounded", "http", long, func(k string) bool {
			return len(k) <= maxSenderKey && strings.HasPrefix(k, "http-999") && strings.Contains(k, "~")
		}},
	}
	for _, c := range cases {
		if k := SenderKey(c.channel, c.id); !c.check(k) {
			t.Errorf("%s: SenderKey = %q", c.name, k)
		}
	}
	if SenderKey("http", long) == SenderKey("http", long+"0") {
		t.Error("two long ids with one prefix share a key")
	}
	if again := long; SenderKey("http", long) != SenderKey("http", again) {
		t.Error("SenderKey is not stable")
	}
}
