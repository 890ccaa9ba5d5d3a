package main

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"
)

// newProgress draws a bar on a terminal and plain lines elsewhere (CI,
// logs), both with rate and ETA.
func newProgress(w *os.File) interface {
	Start(string, int64)
	Add(int64)
	Finish()
} {
	if term.IsTerminal(int(w.Fd())) {
		return &barProgress{w: w}
	}
	return &lineProgress{w: w}
}

type barProgress struct {
	w   io.Writer
	bar *progressbar.ProgressBar
}

func (p *barProgress) Start(label string, total int64) {
	p.bar = progressbar.NewOptions64(total,
		progressbar.OptionSetWriter(p.w),
		progressbar.OptionSetDescription(label),
		progressbar.OptionShowCount(),
		progressbar.OptionShowIts(),
		progressbar.OptionSetItsString("events"),
		progressbar.OptionSetPredictTime(true),
		progressbar.OptionThrottle(100*time.Millisecond),
		progressbar.OptionOnCompletion(func() { fmt.Fprintln(p.w) }),
	)
}

func (p *barProgress) Add(n int64) { _ = p.bar.Add64(n) }
func (p *barProgress) Finish()     { _ = p.bar.Finish() }

type lineProgress struct {
	w            io.Writer
	label        string
	total, done  int64
	start, shown time.Time
}

func (p *lineProgress) Start(label string, total int64) {
	p.label, p.total, p.done, p.start, p.shown = label, total, 0, time.Now(), time.Now()
	fmt.Fprintf(p.w, "%s: %d events to apply\n", label, total)
}

func (p *lineProgress) Add(n int64) {
	p.done += n
	if time.Since(p.shown) >= time.Second {
		p.shown = time.Now()
		p.line()
	}
}

func (p *lineProgress) line() {
	elapsed := time.Since(p.start).Seconds()
	rate := float64(p.done) / max(elapsed, 1e-9)
	eta := "?"
	if rate > 0 && p.total >= p.done {
		eta = (time.Duration(float64(p.total-p.done)/rate) * time.Second).Round(time.Second).String()
	}
	fmt.Fprintf(p.w, "%s: %d/%d events (%.0f events/s, ETA %s)\n", p.label, p.done, p.total, rate, eta)
}

func (p *lineProgress) Finish() {
	elapsed := time.Since(p.start)
	fmt.Fprintf(p.w, "%s: done, %d events in %s (%.0f events/s)\n", p.label, p.done, elapsed.Round(time.Millisecond), float64(p.done)/max(elapsed.Seconds(), 1e-9))
}
