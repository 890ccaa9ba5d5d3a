package rerun

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/omega-gateway/omega/api"
	"github.com/omega-gateway/omega/app"
	"github.com/omega-gateway/omega/app/config"
	"github.com/omega-gateway/omega/channels"
	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/domain/turn"
	"github.com/omega-gateway/omega/eventstore"
)

// copyPrompts copies the prompt overrides of dir (if any) into to.
func copyPrompts(dir, to string) error {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("read prompts %s: %w", dir, err)
	}
	if err := os.MkdirAll(to, 0o700); err != nil {
		return err
	}
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			return fmt.Errorf("read prompt %s: %w", e.Name(), err)
		}
		if err := os.WriteFile(filepath.Join(to, e.Name()), b, 0o600); err != nil {
			return err
		}
	}
	return nil
}

// hints are the channels' format hints, which the system prompt quotes:
// the HTTP API's and the configured registry's channels'.
func hints(cfg config.Config) map[string]string {
	h := map[string]string{api.Name: (&api.Server{}).FormatHint()}
	for _, d := range cfg.Descriptors() {
		h[d.Name] = d.Hint
	}
	return h
}

// runScratch runs the turn in a scratch store and returns its events.
func runScratch(ctx context.Context, src Source, cfg config.Config, o Options, state, recorded []domain.Event, decoded []domain.Payload, msg turn.MessageReceived) ([]domain.Event, error) {
	ctx, cancel := context.WithTimeout(ctx, cmpDur(o.Timeout, 2*time.Minute))
	defer cancel()
	a, err := app.Open(ctx, cfg, o.Logger, app.OpenOptions{})
	if err != nil {
		return nil, fmt.Errorf("open the scratch store: %w", err)
	}
	defer a.Close()
	for _, e := range append(state, recorded[0]) {
		ne := domain.NewEvent{ID: e.ID, Type: e.Type, Data: e.Data, Metadata: e.Metadata}
		if _, err := a.Store.Append(ctx, e.StreamID, eventstore.Any, ne); err != nil {
			return nil, fmt.Errorf("copy %s of %s: %w", e.Type, e.StreamID, err)
		}
	}
	if err := copyTexts(ctx, src, a.Registry, a.Store, state); err != nil {
		return nil, err
	}
	ch := &recorder{name: msg.Channel, hint: hints(cfg)[msg.Channel], photos: photoOutcomes(decoded), images: watchedImages(decoded)}
	for _, p := range decoded {
		if s, ok := p.(turn.ReplySent); ok {
			ch.chunks = append(ch.chunks, s.Chunks)
		}
	}
	// The turn runs on the recorded clock: its idle, due-time and pairing
	// decisions are the ones it made then. The clock starts when it is
	// first read, so the scratch runtime's own start-up (a second or so)
	// does not move the turn's "current time" past a minute it recorded.
	start := recorded[len(recorded)-1].RecordedAt
	if len(recorded) > 1 {
		start = recorded[1].RecordedAt
	}
	now := sinceFirstRead(start)
	replay := *o.replay
	replay.Now = now
	replay.Recall = recalledOf(decoded)
	if !o.Live { // a what-if asks the provider configured now
		replay.ProviderProblem = recordedProblem(decoded)
	}
	// The recorded roles are the projects; the scratch has no folder.
	// The summarizer runs on the real clock, to which the copied
	// conversations look idle: closing them would change the turn's
	// context, so its calls wait until the run ends and record nothing.
	opts := app.RuntimeOptions{Channels: []channels.Channel{ch}, FrozenProjects: true, Capabilities: o.capabilities, Replay: &replay,
		Images: recordedImages(decoded, o.Live), SummaryProvider: waitingProvider{}}
	if opts.Provider, err = scratchProvider(cfg, o, decoded); err != nil {
		return nil, err
	}
	rt, err := a.NewRuntime(ctx, opts)
	if err != nil {
		return nil, fmt.Errorf("scratch runtime: %w", err)
	}
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- rt.Run(runCtx) }()
	evs, err := waitCompleted(ctx, a.Store, recorded[0].StreamID)
	stop()
	if runErr := <-done; err == nil && runErr != nil && !errors.Is(runErr, context.Canceled) {
		err = runErr
	}
	if err != nil {
		return evs, err
	}
	return withTexts(ctx, a.Store, a.Registry, evs)
}

// sinceFirstRead is a clock that reads start when first read and runs on
// from there.
func sinceFirstRead(start time.Time) func() time.Time {
	var once sync.Once
	var realStart time.Time
	return func() time.Time {
		once.Do(func() { realStart = time.Now() })
		return start.Add(time.Since(realStart))
	}
}

func cmpDur(a, b time.Duration) time.Duration {
	if a > 0 {
		return a
	}
	return b
}

func waitCompleted(ctx context.Context, s eventstore.Store, stream string) ([]domain.Event, error) {
	for {
		evs, err := s.Load(ctx, stream, 1)
		if err != nil {
			return nil, err
		}
		if n := len(evs); n > 0 && evs[n-1].Type == "TurnCompleted" {
			return evs, nil
		}
		select {
		case <-ctx.Done():
			return evs, fmt.Errorf("the re-run did not complete: %w", ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
}
