package redact

import (
	"bytes"
	"errors"
	"io"
	"log/slog"
	"strings"
	"testing"
)

const tgToken = "123456789:AAHk-very-secret-bot-token-xyz"

func TestString(t *testing.T) {
	r := New(tgToken, "s3cr3t-pass", "", "abc")
	tests := []struct{ in, want string }{
		{"GET /bot" + tgToken + "/getMe: 404", "GET /bot[REDACTED]/getMe: 404"},
		{"path /bot123456789%3AAAHk-very-secret-bot-token-xyz/x", "path /bot[REDACTED]/x"},
		{"only half AAHk-very-secret-bot-token-xyz here", "only half [REDACTED] here"},
		{"postgres://u:s3cr3t-pass@h/db", "postgres://u:[REDACTED]@h/db"},
		{"abc is too short to be masked", "abc is too short to be masked"},
	}
	for _, tc := range tests {
		if got := r.String(tc.in); got != tc.want {
			t.Errorf("String(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	var none *Redactor
	if got := none.String("x " + tgToken); !strings.Contains(got, tgToken) {
		t.Errorf("nil redactor changed text: %q", got)
	}
}

func TestHandlerMasksEverything(t *testing.T) {
	var buf bytes.Buffer
	r := New(tgToken)
	log := slog.New(r.Handler(slog.NewTextHandler(&buf, nil))).With("url", "https://x/bot"+tgToken)
	log.Error("send failed: "+tgToken, "err", errors.New("echo /bot"+tgToken+"/sendMessage"),
		slog.Group("req", "path", "/bot"+tgToken), "n", 3)
	out := buf.String()
	if strings.Contains(out, "AAHk-very-secret") {
		t.Fatalf("secret in log output:\n%s", out)
	}
	if strings.Count(out, Mask) != 4 || !strings.Contains(out, "n=3") {
		t.Fatalf("unexpected log output:\n%s", out)
	}
}

// BenchmarkHandler compares a log line through the masking handler with
// the same line through the plain handler.
func BenchmarkHandler(b *testing.B) {
	r := New(tgToken, "s3cr3t-pass", "sk-ant-0123456789abcdef", "api-token-0123456789")
	plain := slog.NewTextHandler(io.Discard, nil)
	err := errors.New("telegram sendMessage: 400 Bad Request: chat not found")
	for name, h := range map[string]slog.Handler{"plain": plain, "masked": r.Handler(plain)} {
		log := slog.New(h)
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				log.Warn("reply not delivered", "kind", "reply", "err", err, "chat", "12345")
			}
		})
	}
}

func TestRedactCounts(t *testing.T) {
	r := New("sk-ant-secret-key", "123456:ABCDEFGHIJKLMNOPQRSTUV")
	got, n := r.Redact("key sk-ant-secret-key, bot 123456:ABCDEFGHIJKLMNOPQRSTUV, half ABCDEFGHIJKLMNOPQRSTUV, old " + Mask)
	if n != 3 || got != "key "+Mask+", bot "+Mask+", half "+Mask+", old "+Mask {
		t.Fatalf("Redact = %q, %d", got, n)
	}
	if got, n := r.Redact("nothing here"); n != 0 || got != "nothing here" {
		t.Fatalf("Redact of clean text = %q, %d", got, n)
	}
}
