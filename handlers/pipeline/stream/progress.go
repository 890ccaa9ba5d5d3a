package stream

import (
	"context"
	"log/slog"
	"time"

	"github.com/omega-gateway/omega/channels"
)

// Typing keeps the platform's typing indicator on in chat, refreshed
// every interval, until stop is called; every ≤ 0 shows none.
func Typing(ctx context.Context, ch channels.Channel, chat string, every time.Duration, log *slog.Logger) (stop func()) {
	if ch == nil || every <= 0 {
		return func() {}
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			if err := ch.SendTyping(ctx, chat); err != nil && ctx.Err() == nil {
				log.Debug("typing indicator failed", "err", err)
				return
			}
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	}()
	return func() { cancel(); <-done }
}

// Nudges are the "still working" messages sent while a provider call
// runs long.
type Nudges struct {
	First, Every time.Duration // the first after First, the later ones every Every
	// FirstText and StillText are the messages, in the sender's language.
	FirstText, StillText string
	Send                 func(ctx context.Context, text string) error
	// Quiet, while it reports true (nil: never), holds a nudge back: the
	// chat shows the reply's progress itself.
	Quiet  func() bool
	Logger *slog.Logger
}

// Start sends the nudges until stop, which returns how many were sent:
// none if the call answers before First, none at all when First ≤ 0.
func (n Nudges) Start(ctx context.Context) (stop func() int) {
	if n.First <= 0 {
		return func() int { return 0 }
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	sent := 0
	go func() {
		defer close(done)
		wait, text := n.First, n.FirstText
		for {
			select {
			case <-ctx.Done():
				return
			case <-time.After(wait):
			}
			if n.Quiet != nil && n.Quiet() {
				wait, text = n.Every, n.StillText
				continue
			}
			if err := n.Send(ctx, text); err != nil {
				if ctx.Err() == nil {
					n.Logger.Warn("status message not delivered", "err", err)
				}
			} else {
				sent++
			}
			wait, text = n.Every, n.StillText
		}
	}()
	return func() int {
		cancel()
		<-done
		return sent
	}
}
