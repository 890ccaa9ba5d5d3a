package pipeline_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/domain/i18n"
	"github.com/omega-gateway/omega/domain/i18n/budgetmsg"
	"github.com/omega-gateway/omega/domain/markers"
	"github.com/omega-gateway/omega/domain/turn"
	"github.com/omega-gateway/omega/handlers/pipeline"
	"github.com/omega-gateway/omega/handlers/pipeline/replytext"
	"github.com/omega-gateway/omega/providers"
)

// planReplies makes the fake provider classify with classification and
// answer each plan step with "result of <step>"; fail decides whether a
// step call fails.
func planReplies(classification string, fail func(step string, call int) error) func(context.Context, int, providers.Request) (providers.Response, error) {
	return func(_ context.Context, call int, req providers.Request) (providers.Response, error) {
		if strings.Contains(req.Prompt, "Request: ") && req.System == "" {
			return providers.Response{Text: classification}, nil
		}
		step := lastLine(req.Prompt)
		if fail != nil {
			if err := fail(step, call); err != nil {
				return providers.Response{}, err
			}
		}
		return providers.Response{Text: "result of " + step}, nil
	}
}

func lastLine(s string) string {
	return s[strings.LastIndex(s, "\n")+1:]
}

// recordingHook is a ReplyHook that strips "MARK" and records which step
// each reply came from.
type recordingHook struct {
	mu    sync.Mutex
	steps []int
}

func (h *recordingHook) Process(_ context.Context, _ *turn.Turn, raw string, step int) (pipeline.Processed, error) {
	h.mu.Lock()
	h.steps = append(h.steps, step)
	h.mu.Unlock()
	return pipeline.Processed{
		Text:   strings.TrimSpace(strings.ReplaceAll(raw, "MARK", "")),
		Events: []domain.Payload{turn.MarkersApplied{Step: step, Markers: []markers.AppliedMarker{{Name: "MARK", Effect: "seen"}}}},
	}, nil
}

func (h *recordingHook) calls() []int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]int(nil), h.steps...)
}

func planFixture(t *testing.T) (*fixture, *recordingHook) {
	f := newFixture(t)
	hook := &recordingHook{}
	f.driver.Replies = hook
	f.driver.Config.Classify = true
	f.driver.Config.ModelComplex = "complex"
	return f, hook
}

const threeSteps = "Here is the plan:\n1. Gather the data\n2. Build the report\n3. Send it MARK"

func TestPlanRunsEveryStepWithProgress(t *testing.T) {
	f, hook := planFixture(t)
	f.provider.reply = planReplies(threeSteps, nil)
	id := f.turn(t, message("prepara el informe trimestral"))

	reqs := f.provider.requests()
	if len(reqs) != 4 {
		t.Fatalf("provider called %d times, want 4 (classification + 3 steps)", len(reqs))
	}
	if c := reqs[0]; c.Model != "fast" || c.System != "" || c.SessionID != "" || !strings.HasSuffix(c.Prompt, "Request: prepara el informe trimestral") {
		t.Errorf("classification request = %+v", c)
	}
	for i, r := range reqs[1:] {
		if r.Model != "complex" || r.System == "" || !strings.Contains(r.Prompt, "Original task: prepara el informe trimestral") {
			t.Errorf("step %d request: model %q, system %d bytes, prompt %q", i+1, r.Model, len(r.System), r.Prompt)
		}
	}
	// Each step sees the results before it, as the user saw them.
	if !strings.Contains(reqs[3].Prompt, "Step 1 (Gather the data): result of Step 1 of 3: Gather the data") ||
		!strings.Contains(reqs[3].Prompt, "Step 2 (Build the report): result of Step 2 of 3: Build the report") {
		t.Errorf("step 3 prompt lacks the results so far:\n%s", reqs[3].Prompt)
	}

	steps := []string{"Gather the data", "Build the report", "Send it MARK"}
	want := []string{
		i18n.More(lang, i18n.PlanAnnounce, 3, "1. Gather the data\n2. Build the report\n3. Send it MARK"),
		i18n.More(lang, i18n.StepDone, 1, 3, steps[0]),
		i18n.More(lang, i18n.StepDone, 2, 3, steps[1]),
		i18n.More(lang, i18n.StepDone, 3, 3, steps[2]),
		i18n.More(lang, i18n.PlanDone, 3, 3) + "\n\n" +
			i18n.More(lang, i18n.StepDone, 1, 3, steps[0]) + "\nresult of Step 1 of 3: Gather the data\n\n" +
			i18n.More(lang, i18n.StepDone, 2, 3, steps[1]) + "\nresult of Step 2 of 3: Build the report\n\n" +
			i18n.More(lang, i18n.StepDone, 3, 3, steps[2]) + "\nresult of Step 3 of 3: Send it",
	}
	if got := f.channel.texts(); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("sent:\n%q\nwant:\n%q", got, want)
	}
	if got := hook.calls(); fmt.Sprint(got) != "[1 2 3]" {
		t.Errorf("markers processed for steps %v, want [1 2 3]", got)
	}

	ps := f.events(t, domain.TurnStream(id))
	route := ofType[turn.RouteDecided](ps)
	if len(route) != 1 || route[0].Direct || route[0].Model != "complex" || len(route[0].Steps) != 3 || route[0].Raw != threeSteps {
		t.Errorf("RouteDecided = %+v", route)
	}
	done := ofType[turn.PlanStepCompleted](ps)
	if len(done) != 3 || done[2].Index != 3 || done[2].Reply != "result of Step 3 of 3: Send it MARK" {
		t.Errorf("PlanStepCompleted = %+v", done)
	}
	if n := len(ofType[turn.PlanProgressSent](ps)); n != 4 {
		t.Errorf("%d PlanProgressSent, want 4", n)
	}
	if marks := ofType[turn.MarkersApplied](ps); len(marks) != 3 || marks[1].Step != 2 {
		t.Errorf("MarkersApplied = %+v", marks)
	}
	if n := len(ofType[turn.ProviderCalled](ps)); n != 0 {
		t.Errorf("a plan recorded %d direct provider calls", n)
	}
	if got := completion(t, ps).Status; got != turn.StatusOK {
		t.Errorf("status %q, want ok", got)
	}
}

func TestPlanDirectAndFallback(t *testing.T) {
	tests := []struct {
		name     string
		classify func() (providers.Response, error)
		wantErr  bool
	}{
		{"direct", func() (providers.Response, error) { return providers.Response{Text: "DIRECT"}, nil }, false},
		{"a single step is direct", func() (providers.Response, error) { return providers.Response{Text: "1. Answer"}, nil }, false},
		{"unparseable is direct", func() (providers.Response, error) { return providers.Response{Text: "hmm"}, nil }, false},
		{"classification failed", func() (providers.Response, error) {
			return providers.Response{}, &providers.Error{Class: providers.Server, Provider: "fake", Msg: "overloaded"}
		}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, hook := planFixture(t)
			f.provider.reply = func(_ context.Context, call int, req providers.Request) (providers.Response, error) {
				if call == 1 {
					return tt.classify()
				}
				return providers.Response{Text: "respuesta"}, nil
			}
			id := f.turn(t, message("primero busca los datos y luego prepara el informe"))

			reqs := f.provider.requests()
			if len(reqs) != 2 || reqs[1].Model != "fast" || reqs[1].System == "" {
				t.Fatalf("requests = %+v, want classification then one direct call with the fast model", reqs)
			}
			ps := f.events(t, domain.TurnStream(id))
			route := ofType[turn.RouteDecided](ps)
			if len(route) != 1 || !route[0].Direct || route[0].Model != "fast" || (route[0].Error != "") != tt.wantErr {
				t.Errorf("RouteDecided = %+v", route)
			}
			if got := f.channel.texts(); len(got) != 1 || got[0] != "respuesta" {
				t.Errorf("sent %q, want the direct reply only", got)
			}
			if got := hook.calls(); fmt.Sprint(got) != "[0]" {
				t.Errorf("markers processed for %v, want the direct reply [0]", got)
			}
			if got := completion(t, ps).Status; got != turn.StatusOK {
				t.Errorf("status %q", got)
			}
		})
	}
}

func TestPlanStepRetries(t *testing.T) {
	serverErr := &providers.Error{Class: providers.Server, Provider: "fake", Msg: "boom"}
	tests := []struct {
		name       string
		failures   int // of step 2
		wantStatus string
		wantCalls  int
	}{
		{"recovers on the third attempt", 2, turn.StatusOK, 1 + 1 + 3 + 1},
		{"stops after three attempts", 3, turn.StatusError, 1 + 1 + 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, _ := planFixture(t)
			failed := 0
			f.provider.reply = planReplies(threeSteps, func(step string, _ int) error {
				if strings.Contains(step, "Build the report") && failed < tt.failures {
					failed++
					return serverErr
				}
				return nil
			})
			id := f.turn(t, message("prepara el informe"))

			if n := len(f.provider.requests()); n != tt.wantCalls {
				t.Errorf("provider called %d times, want %d", n, tt.wantCalls)
			}
			ps := f.events(t, domain.TurnStream(id))
			fails := ofType[turn.PlanStepFailed](ps)
			if len(fails) != tt.failures {
				t.Fatalf("PlanStepFailed = %+v", fails)
			}
			for i, fl := range fails {
				if fl.Index != 2 || fl.Attempt != i+1 || fl.Class != "server" {
					t.Errorf("failure %d = %+v", i, fl)
				}
			}
			if got := completion(t, ps).Status; got != tt.wantStatus {
				t.Errorf("status %q, want %q", got, tt.wantStatus)
			}
			sent := f.channel.texts()
			last := sent[len(sent)-1]
			if tt.wantStatus == turn.StatusError {
				want := i18n.More(lang, i18n.StepFailed, 2, 3, "Build the report") + "\n" + i18n.Text(lang, i18n.ErrServer) + "\n\n" +
					i18n.More(lang, i18n.PlanDone, 1, 3) + "\n\n" +
					i18n.More(lang, i18n.StepDone, 1, 3, "Gather the data") + "\nresult of Step 1 of 3: Gather the data"
				if last != want {
					t.Errorf("final reply %q, want %q", last, want)
				}
				if sentKind := ofType[turn.ReplySent](ps); len(sentKind) != 1 || sentKind[0].Kind != "error" {
					t.Errorf("ReplySent = %+v", sentKind)
				}
			} else if !strings.HasPrefix(last, i18n.More(lang, i18n.PlanDone, 3, 3)) {
				t.Errorf("final reply %q", last)
			}
		})
	}
}

// A step a spending limit refuses stops the plan at once (asking again
// before the limit resets is refused the same way), and the final reply
// says why and when the limit resets, in the sender's language; the
// refusal is no provider call in the ledger.
func TestPlanStepRefusedByABudget(t *testing.T) {
	f, _ := planFixture(t)
	reset := time.Date(2026, 11, 28, 0, 0, 0, 0, time.UTC)
	f.provider.reply = planReplies(threeSteps, func(step string, _ int) error {
		if strings.Contains(step, "Build the report") {
			return &providers.Error{Class: providers.OverBudget, Provider: "fake", Msg: "daily limit reached", Until: reset}
		}
		return nil
	})
	id := f.turn(t, message("prepara el informe"))

	ps := f.events(t, domain.TurnStream(id))
	fails := ofType[turn.PlanStepFailed](ps)
	if len(fails) != 1 || fails[0].Class != turn.ClassOverBudget || fails[0].ResetAt == nil || !fails[0].ResetAt.Equal(reset) {
		t.Fatalf("PlanStepFailed = %+v, want one refusal resetting at %s", fails, reset)
	}
	if _, counted := fails[0].ProviderCall(); counted {
		t.Error("the refused step counts as a provider call")
	}
	if got := completion(t, ps).Status; got != turn.StatusError {
		t.Errorf("status %q, want %q", got, turn.StatusError)
	}
	sent := f.channel.texts()
	last := sent[len(sent)-1]
	want := i18n.More(lang, i18n.StepFailed, 2, 3, "Build the report") + "\n" +
		budgetmsg.Text(lang, budgetmsg.Exceeded, replytext.ResetTime(reset, time.UTC))
	if !strings.HasPrefix(last, want) {
		t.Errorf("final reply %q, want it to start with %q", last, want)
	}
}

func TestPlanResumesAtTheInterruptedStep(t *testing.T) {
	f, hook := planFixture(t)
	ctx, cancel := context.WithCancel(context.Background())
	// First process: step 2 hangs until the process stops.
	f.provider.reply = func(c context.Context, call int, req providers.Request) (providers.Response, error) {
		if strings.Contains(lastLine(req.Prompt), "Build the report") {
			cancel()
			<-c.Done()
			return providers.Response{}, c.Err()
		}
		return planReplies(threeSteps, nil)(c, call, req)
	}
	id := uuid.NewString()
	f.appendTo(t, domain.TurnStream(id), 0, message("prepara el informe"))
	if err := f.driver.Run(ctx, id); !errors.Is(err, context.Canceled) {
		t.Fatalf("interrupted run = %v, want context.Canceled", err)
	}
	before := len(f.provider.requests())

	// Second process: the turn resumes at step 2.
	f.provider.reply = planReplies("not asked again", nil)
	if err := f.driver.Run(context.Background(), id); err != nil {
		t.Fatal(err)
	}
	var again []string
	for _, r := range f.provider.requests()[before:] {
		again = append(again, lastLine(r.Prompt))
	}
	if want := []string{"Step 2 of 3: Build the report", "Step 3 of 3: Send it MARK"}; fmt.Sprint(again) != fmt.Sprint(want) {
		t.Errorf("after the restart the provider was asked %q, want %q", again, want)
	}
	if got := hook.calls(); fmt.Sprint(got) != "[1 2 3]" {
		t.Errorf("markers processed for steps %v, want each once", got)
	}
	ps := f.events(t, domain.TurnStream(id))
	if n := len(ofType[turn.PlanStepCompleted](ps)); n != 3 {
		t.Errorf("%d PlanStepCompleted, want 3", n)
	}
	if got := completion(t, ps).Status; got != turn.StatusOK {
		t.Errorf("status %q", got)
	}
}
