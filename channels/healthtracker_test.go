package channels

import (
	"errors"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Each change of state is reported once, with the failures it lasted;
// repeated failures in one state are counted, not reported.
func TestHealthTrackerReportsChangesOnly(t *testing.T) {
	at := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	h := NewHealthTracker("demo", slog.New(slog.NewTextHandler(io.Discard, nil)), func() time.Time { return at })
	var got []string
	h.SetFunc(func(ev Health) {
		if ev.Channel != "demo" || !ev.At.Equal(at) {
			t.Errorf("event %+v", ev)
		}
		got = append(got, ev.State+":"+strconv.Itoa(ev.Failures))
	})
	h.OK()
	down := errors.New("refused")
	if n := h.Failed(HealthDown, down.Error()); n != 1 {
		t.Fatalf("first failure counted %d", n)
	}
	h.Failed(HealthDown, down.Error())
	h.Failed(HealthStalled, "no answer")
	if h.Up() {
		t.Fatal("a stalled channel is up")
	}
	h.OK()
	h.OK()
	if want := "down:1 stalled:3 up:3"; strings.Join(got, " ") != want {
		t.Fatalf("reported %q, want %q", strings.Join(got, " "), want)
	}
	if !h.Up() || h.Failed(HealthDown, "again") != 1 {
		t.Fatal("recovery did not reset the failures")
	}
}
