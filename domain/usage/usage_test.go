package usage_test

import (
	"slices"
	"testing"

	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/domain/usage"
)

var used = &usage.CallUsage{DurationMs: 1200, InputTokens: 10, OutputTokens: 3, CostUSD: 0.02, UsageReported: true, PromptBytes: 40, ReplyBytes: 9}

type callFunc func(purpose string, u *usage.CallUsage, failed bool) (usage.ProviderCall, bool)

// OptionalCall counts no call without usage; CalledCall always counts
// one, its usage unknown when none was recorded.
func TestOptionalAndCalledCall(t *testing.T) {
	cases := []struct {
		name   string
		call   callFunc
		u      *usage.CallUsage
		failed bool
		want   usage.ProviderCall
		ok     bool
	}{
		{"optional, no usage", usage.OptionalCall, nil, false, usage.ProviderCall{}, false},
		{"optional, failed without usage", usage.OptionalCall, nil, true, usage.ProviderCall{}, false},
		{"optional, with usage", usage.OptionalCall, used, false, usage.ProviderCall{Purpose: usage.PurposeSummary, Usage: *used}, true},
		{"optional, failed with usage", usage.OptionalCall, used, true, usage.ProviderCall{Purpose: usage.PurposeSummary, Failed: true, Usage: *used}, true},
		{"called, no usage", usage.CalledCall, nil, false, usage.ProviderCall{Purpose: usage.PurposeSummary}, true},
		{"called, failed without usage", usage.CalledCall, nil, true, usage.ProviderCall{Purpose: usage.PurposeSummary, Failed: true}, true},
		{"called, with usage", usage.CalledCall, used, false, usage.ProviderCall{Purpose: usage.PurposeSummary, Usage: *used}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, ok := c.call(usage.PurposeSummary, c.u, c.failed)
			if got != c.want || ok != c.ok {
				t.Fatalf("= %+v, %v; want %+v, %v", got, ok, c.want, c.ok)
			}
		})
	}
}

// The call holds a copy of the usage: the event's usage changing later
// does not change what was counted.
func TestCallCopiesTheUsage(t *testing.T) {
	for _, call := range []callFunc{usage.OptionalCall, usage.CalledCall} {
		u := *used
		got, _ := call(usage.PurposeTurn, &u, false)
		u.InputTokens++
		if got.Usage.InputTokens != used.InputTokens {
			t.Errorf("the call follows the usage it was made from: %+v", got.Usage)
		}
	}
}

type recorder struct {
	call usage.ProviderCall
	ok   bool
}

func (recorder) EventType() string                          { return "Recorder" }
func (r recorder) ProviderCall() (usage.ProviderCall, bool) { return r.call, r.ok }

type plain struct{}

func (plain) EventType() string { return "Plain" }

func TestProviderCallOfAsksTheRecorder(t *testing.T) {
	call := usage.ProviderCall{Purpose: usage.PurposeFacts, Failed: true, Usage: *used}
	cases := []struct {
		name string
		p    domain.Payload
		want usage.ProviderCall
		ok   bool
	}{
		{"a recorder of a call", recorder{call: call, ok: true}, call, true},
		{"a recorder of no call", recorder{call: call}, call, false},
		{"an event that records no call", plain{}, usage.ProviderCall{}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, ok := usage.ProviderCallOf(c.p)
			if got != c.want || ok != c.ok {
				t.Fatalf("ProviderCallOf = %+v, %v; want %+v, %v", got, ok, c.want, c.ok)
			}
		})
	}
}

// Purposes is the order reports show; each call gets its own list.
func TestPurposes(t *testing.T) {
	want := []string{"turn", "plan_step", "classifier", "heartbeat", "summary", "facts", "self_heal", "build"}
	got := usage.Purposes()
	if !slices.Equal(got, want) {
		t.Fatalf("Purposes() = %v, want %v", got, want)
	}
	got[0] = "changed"
	if usage.Purposes()[0] != "turn" {
		t.Fatal("a caller changing its list changed the next caller's")
	}
}
