package summary

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/domain/sender"
	"github.com/omega-gateway/omega/domain/turn"
)

func TestIsValidFact(t *testing.T) {
	cases := []struct {
		key, value string
		want       error // nil: accepted
	}{
		{"name", "Ana", nil},
		{"favourite food", "paella", nil},
		{"important_dates", "wedding anniversary 12 May", nil},
		{"", "x", sender.ErrFactKey},
		{strings.Repeat("k", 50), "ok", nil},
		{strings.Repeat("k", 51), "ok", sender.ErrFactKey},
		{"12345", "a number key", sender.ErrFactKey},
		{"pet", "", sender.ErrFactValue},
		{"bio", strings.Repeat("v", 200), nil},
		{"bio", strings.Repeat("v", 201), sender.ErrFactValue},
		{"budget", "$1,200", sender.ErrFactValue},
		{"row", "BTC | 42000 | up", sender.ErrFactValue},
		{"row", "one | pipe is fine", nil},
		{"price", "42,000.50", sender.ErrFactValue},
		{"age", "41", sender.ErrFactValue},
		{"welcomed", "true", ErrReservedFact},
		{"Preferred Language", "Spanish", ErrReservedFact},
		{"active_project", "omega", ErrReservedFact},
		{"personality", "terse", ErrReservedFact},
		{"api_key", "sk-proj-4f9aQ2xL7mN3bV8cZ1kR6tY0", sender.ErrFactSecret},
		{"note", "my key is sk-ant-api03-Zx81kLmQ9vB2nC7dF4gH", sender.ErrFactSecret},
		{"bot", "123456789:AAHk3j5LmN8pQ2rS4tU6vW8xY0zA1bC3dE5", sender.ErrFactSecret},
		{"github", "ghp_1a2B3c4D5e6F7g8H9i0JkLmNoPqRsTuV", sender.ErrFactSecret},
		{"blob", "Zm9vYmFyMTIzNDU2Nzg5MGFiY2RlZmdoaWprbG1u", sender.ErrFactSecret},
		{"wifi_password", "hunter22", sender.ErrFactSecret},
		{"bad_key!", "x", sender.ErrFactKey},
		{"dog.name", "Rex", sender.ErrFactKey},
		{"PURGE_FACTS", "yes", sender.ErrFactKey},
		{"schedule", "mornings", sender.ErrFactKey},
		{"plan", "SCHEDULE: call mum | tomorrow | once", sender.ErrFactValue},
		{"website", "https://example.com/about-me", nil},
		{"repo", "https://github.com/ana-perez/holiday-planner-2024-final-version", nil},
		{"secret_santa", "gives to Bob", nil},
		{"github_token", "anything", sender.ErrFactSecret},
		{"hex", "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08", sender.ErrFactSecret},
		{"ciudad", "Málaga", nil},
		{"skill", "speaks English and Spanish fluently", nil},
	}
	for _, c := range cases {
		err := IsValidFact(c.key, c.value)
		if c.want == nil && err != nil || c.want != nil && !errors.Is(err, c.want) {
			t.Errorf("IsValidFact(%q, %q) = %v, want %v", c.key, c.value, err, c.want)
		}
	}
}

func TestParseFacts(t *testing.T) {
	cases := []struct {
		name     string
		reply    string
		accepted []FactCandidate
		rejected int
	}{
		{"none", "none", nil, 0},
		{"none with punctuation", " None.\n", nil, 0},
		{"pairs", "name: Ana\nTime Zone: Europe/Madrid\n", []FactCandidate{{"name", "Ana"}, {"time_zone", "Europe/Madrid"}}, 0},
		// A preamble ending in a colon has an empty value: rejected, recorded.
		{"bullets and preamble", "Here are the facts:\n- pets: a cat called Miso\n* **diet**: vegetarian", []FactCandidate{{"pets", "a cat called Miso"}, {"diet", "vegetarian"}}, 1},
		{"bad ones recorded", "age: 41\nbudget: $300\n12: twelve\nhobby: climbing", []FactCandidate{{"hobby", "climbing"}}, 3},
		{"value with colon", "meeting_style: mornings: never", []FactCandidate{{"meeting_style", "mornings: never"}}, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			acc, rej := ParseFacts(c.reply)
			if !reflect.DeepEqual(acc, c.accepted) || len(rej) != c.rejected {
				t.Fatalf("accepted %v (want %v), rejected %v (want %d)", acc, c.accepted, rej, c.rejected)
			}
			for _, r := range rej {
				if r.Line == "" || r.Reason == "" {
					t.Fatalf("rejection without line or reason: %+v", r)
				}
			}
		})
	}
}

func TestSummarizationNext(t *testing.T) {
	req := SummaryRequested{ConversationID: "c", Messages: 4}
	cases := []struct {
		name   string
		events []domain.Payload
		want   SummaryStep
	}{
		{"nothing yet: claim", nil, SummaryStepClaim},
		{"claimed: summarize", []domain.Payload{req}, SummaryStepSummarize},
		{"empty conversation: close without a call", []domain.Payload{SummaryRequested{ConversationID: "c"}}, SummaryStepClose},
		{"summary on record: never asked again", []domain.Payload{req, SummaryWritten{Text: "s"}}, SummaryStepFacts},
		{"facts on record: close", []domain.Payload{req, SummaryWritten{Text: "s"}, FactsExtracted{}}, SummaryStepClose},
		{"closed", []domain.Payload{req, SummaryWritten{Text: "s"}, FactsExtracted{}, turn.ConversationClosed{}}, SummaryStepDone},
	}
	for _, c := range cases {
		var s Summarization
		for _, e := range c.events {
			s.Apply(e)
		}
		if got := s.Next(); got != c.want {
			t.Errorf("%s: Next() = %d, want %d", c.name, got, c.want)
		}
	}
	var empty Summarization
	empty.Apply(SummaryRequested{})
	if empty.Summary() != EmptyConversationSummary {
		t.Fatalf("empty summary = %q", empty.Summary())
	}
	if FallbackSummary(6) != "(6 messages, summary unavailable)" {
		t.Fatalf("fallback = %q", FallbackSummary(6))
	}
	if Transcript([]turn.HistoryMessage{{Role: "user", Text: "hi"}, {Role: "assistant", Text: "hello"}}) != "User: hi\nAssistant: hello" {
		t.Fatal("transcript format")
	}
}

func TestExtractFactsMasksSecrets(t *testing.T) {
	const key = "sk-proj-4f9aQ2xL7mN3bV8cZ1kR6tY0wE5uI"
	x := ExtractFacts("name: Ana\napi_key: " + key + "\nwifi_password: hunter22\nPS: her key is " + key)
	if len(x.Accepted) != 1 || len(x.Rejected) != 3 {
		t.Fatalf("accepted %v rejected %v", x.Accepted, x.Rejected)
	}
	if strings.Contains(x.Raw, key) || strings.Contains(x.Raw, "hunter22") || !strings.Contains(x.Raw, "api_key: "+sender.SecretMask) {
		t.Fatalf("raw reply keeps a secret: %q", x.Raw)
	}
	for _, r := range x.Rejected {
		if strings.Contains(r.Line, key) || strings.Contains(r.Line, "hunter22") {
			t.Fatalf("refusal keeps a secret: %+v", r)
		}
	}
}
