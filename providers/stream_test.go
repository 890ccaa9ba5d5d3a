package providers

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/omega-gateway/omega/providers/providertest"
)

// flaky streams: it fails with errs in order (after reporting the text in
// partial, if any), then succeeds.
type flaky struct {
	scripted
	partial string
}

func (f *flaky) Stream(_ context.Context, _ Request, onDelta func(Delta)) (Response, error) {
	f.calls++
	if f.calls <= len(f.errs) {
		if f.partial != "" {
			onDelta(Delta{Text: f.partial})
		}
		return Response{}, f.errs[f.calls-1]
	}
	onDelta(Delta{Text: "ok"})
	return Response{Text: "ok"}, nil
}

func TestWithRetryStream(t *testing.T) {
	policy := RetryPolicy{Base: time.Millisecond, Sleep: func(context.Context, time.Duration) error { return nil }}
	tests := []struct {
		name      string
		inner     Provider
		wantErr   bool
		wantCalls int
		wantText  string
	}{
		{"retried before the first delta", &flaky{scripted: scripted{errs: []error{classErr(Server)}}}, false, 2, "ok"},
		{"never after a delta", &flaky{scripted: scripted{errs: []error{classErr(Server)}}, partial: "Hel"}, true, 1, "Hel"},
		{"a provider that cannot stream is one delta", &scripted{errs: []error{classErr(Server)}}, false, 2, "ok"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var reported strings.Builder
			_, err := WithRetry(tt.inner, policy, discardLogger()).(Streamer).Stream(t.Context(), Request{},
				func(d Delta) { reported.WriteString(d.Text) })
			calls := 0
			switch p := tt.inner.(type) {
			case *flaky:
				calls = p.calls
			case *scripted:
				calls = p.calls
			}
			if (err != nil) != tt.wantErr || calls != tt.wantCalls || reported.String() != tt.wantText {
				t.Errorf("err %v, %d calls, reported %q; want error %v, %d calls, %q",
					err, calls, reported.String(), tt.wantErr, tt.wantCalls, tt.wantText)
			}
		})
	}
}

func TestStreamPlanDeltas(t *testing.T) {
	plan := providertest.StreamPlan{Words: 120}
	if n := len(plan.Deltas()); n != 120 {
		t.Errorf("%d deltas, want 120", n)
	}
	text := providertest.StreamPlan{Text: "Hi  there,\nworld"}
	if got := text.Deltas(); strings.Join(got, "") != "Hi  there,\nworld" || len(got) != 2 {
		t.Errorf("deltas %q", got)
	}
}
