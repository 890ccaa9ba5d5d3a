package providers

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/caarlos0/env/v11"
)

func TestConfigDefaults(t *testing.T) {
	var wrapper struct {
		Providers Config `envPrefix:"OMEGA_"`
	}
	err := env.ParseWithOptions(&wrapper, env.Options{Environment: map[string]string{
		"OMEGA_PROVIDER": "openai", "OMEGA_OPENAI_BASE_URL": "http://localhost:11434/v1",
	}})
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	want := Config{
		Provider: "openai", ClaudeBin: "claude", Sandbox: "workspace", ClaudeMaxTurns: 100, ClaudeMaxResumes: 5,
		ClaudeResumeBackoff: 2 * time.Second, ModelFast: "claude-sonnet-4-6", ModelComplex: "claude-opus-4-6",
		MaxTokens: 8192, AnthropicBaseURL: "https://api.anthropic.com", OpenAIBaseURL: "http://localhost:11434/v1",
		MaxRetries: 3, RetryBase: time.Second,
	}
	if wrapper.Providers != want {
		t.Errorf("got  %+v\nwant %+v", wrapper.Providers, want)
	}
}

func TestErrorFormatting(t *testing.T) {
	cause := errors.New("connection reset")
	err := fmt.Errorf("turn t-1: %w", &Error{Class: Server, Status: 502, Provider: "openai", Msg: "bad gateway", Err: cause})
	if got, want := err.Error(), "turn t-1: openai: server (status 502): bad gateway: connection reset"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if !errors.Is(err, cause) || ClassOf(err) != Server {
		t.Errorf("wrapping lost the cause or the class")
	}
}

func TestClassOf(t *testing.T) {
	tests := []struct {
		err  error
		want Class
	}{
		{nil, Unknown},
		{errors.New("x"), Unknown},
		{fmt.Errorf("a: %w", &Error{Class: Auth}), Auth},
		{fmt.Errorf("a: %w", contextDeadline()), Timeout},
	}
	for _, tt := range tests {
		if got := ClassOf(tt.err); got != tt.want {
			t.Errorf("ClassOf(%v) = %v, want %v", tt.err, got, tt.want)
		}
	}
}

func TestRetryable(t *testing.T) {
	for c := Unknown; c <= Unavailable; c++ {
		want := c == RateLimited || c == Server || c == Timeout
		if c.Retryable() != want {
			t.Errorf("%v.Retryable() = %v", c, c.Retryable())
		}
	}
}

func TestFriendlyError(t *testing.T) {
	raw := "openai: secret internal detail"
	seen := map[string]Class{}
	for c := Unknown; c <= Unavailable; c++ {
		msg := FriendlyError(&Error{Class: c, Provider: "openai", Msg: raw})
		if msg == "" || strings.Contains(msg, "internal detail") {
			t.Errorf("%v: bad friendly message %q", c, msg)
		}
		if other, dup := seen[msg]; dup {
			t.Errorf("%v and %v share the message %q", c, other, msg)
		}
		seen[msg] = c
	}
	if got := FriendlyError(errors.New("anything")); got != "Something went wrong. Please try again." {
		t.Errorf("unclassified: %q", got)
	}
}

func TestExcerpt(t *testing.T) {
	if got := Excerpt("  héllo wörld  ", 2); got != "h…" {
		t.Errorf("got %q", got)
	}
	if got := Excerpt(" short ", 10); got != "short" {
		t.Errorf("got %q", got)
	}
}
