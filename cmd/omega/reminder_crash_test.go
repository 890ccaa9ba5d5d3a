package main

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/omega-gateway/omega/channels/telegram/telegramtest"
	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/eventstore"
	"github.com/omega-gateway/omega/internal/freeport"
)

// stallFirst stands in front of the Bot API double and holds the first
// sendMessage whose text contains part until its caller goes away (the
// process is killed mid-send): that message never reaches the double.
// Everything else passes through.
type stallFirst struct {
	part    string
	proxy   *httputil.ReverseProxy
	once    sync.Once
	stalled chan struct{}
}

// newStallFirst returns the server and a channel closed when it stalled.
func newStallFirst(t *testing.T, target, part string) (*httptest.Server, <-chan struct{}) {
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	s := &stallFirst{part: part, proxy: httputil.NewSingleHostReverseProxy(u), stalled: make(chan struct{})}
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	return srv, s.stalled
}

func (s *stallFirst) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(body))
	if strings.HasSuffix(r.URL.Path, "/sendMessage") && strings.Contains(string(body), s.part) {
		first := false
		s.once.Do(func() { first = true })
		if first {
			close(s.stalled)
			<-r.Context().Done()
			return
		}
	}
	s.proxy.ServeHTTP(w, r)
}

// kill -9 while a reminder is being sent (the Bot API holds the request),
// then an immediate restart: the restarted node knows the cut-off send is
// its own and sends the reminder again at once, not after the 30 s an
// unsettled attempt of another process is given; it arrives once.
func TestReminderCutOffByCrashResumesAtRestart(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin := buildOmega(t)
	for _, b := range storeBackends() {
		t.Run(b.name, func(t *testing.T) {
			vars, open := b.env(t)
			claude := filepath.Join(t.TempDir(), "claude")
			script := `#!/bin/sh
due=$(date -u -d '+3 seconds' +%Y-%m-%dT%H:%M:%SZ)
printf '{"type":"result","subtype":"success","is_error":false,"result":"Sure.\\nSCHEDULE: Call Juan | %s | once","session_id":"s-1","num_turns":1}\n' "$due"
`
			if err := os.WriteFile(claude, []byte(script), 0o755); err != nil {
				t.Fatal(err)
			}
			api := telegramtest.New(t, tgToken)
			front, stalled := newStallFirst(t, api.URL, "Reminder: Call Juan")
			addr := freeport.Addr(t)
			env := append(os.Environ(), vars...)
			env = append(env, "OMEGA_CLAUDE_BIN="+claude, "OMEGA_HTTP_ADDR="+addr, "OMEGA_CLASSIFY=false",
				"OMEGA_TELEGRAM_TOKEN="+tgToken, "OMEGA_TELEGRAM_API_URL="+front.URL, "OMEGA_TELEGRAM_ALLOWED_USERS=42",
				"OMEGA_TIMEZONE=UTC", "HOME="+t.TempDir())

			first := startServe(t, bin, env)
			waitHTTP(t, "http://"+addr)
			api.PushText(42, 42, "remind me to call Juan")
			waitMessage(t, api, "Reminder scheduled")
			select {
			case <-stalled:
			case <-time.After(60 * time.Second):
				t.Fatal("the reminder was never sent")
			}
			if err := first.cmd.Process.Signal(syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			_ = first.cmd.Wait()

			second := startServe(t, bin, env)
			waitHTTP(t, "http://"+addr)
			waitMessageWithin(t, api, "Reminder: Call Juan", 60*time.Second)
			s := open()
			for deadline := time.Now().Add(30 * time.Second); countType(taskEvents(t, s), "TaskDelivered") == 0; {
				if time.Now().After(deadline) {
					t.Fatal("the delivery was never recorded")
				}
				time.Sleep(20 * time.Millisecond)
			}
			if err := second.cmd.Process.Signal(syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			_ = second.cmd.Wait()
			if n := countMessages(api, "Reminder: Call Juan"); n != 1 {
				t.Fatalf("reminder arrived %d times", n)
			}

			// The second attempt was not made by waiting out the first:
			// it was recorded before the first would have counted as dead.
			var started []time.Time
			var delivered []domain.Event
			for _, e := range taskEvents(t, s) {
				switch e.Type {
				case "TaskDeliveryStarted":
					started = append(started, e.RecordedAt)
				case "TaskDelivered":
					delivered = append(delivered, e)
				}
			}
			if len(started) != 2 || len(delivered) != 1 {
				t.Fatalf("%d attempts started and %d delivered, want 2 and 1", len(started), len(delivered))
			}
			if deadline := started[0].Add(staleDelivery); !started[1].Before(deadline) {
				t.Fatalf("second attempt at %s, not before the first counted as dead (%s)", started[1], deadline)
			}
			if !strings.Contains(string(delivered[0].Data), `"maybe_duplicate":true`) {
				t.Errorf("the resent reminder is not marked as a possible duplicate: %s", delivered[0].Data)
			}
		})
	}
}

// staleDelivery is how long another process leaves an unsettled delivery
// attempt alone (taskwork.Config.Stale's default).
const staleDelivery = 30 * time.Second

func waitMessageWithin(t *testing.T, api *telegramtest.Server, part string, bound time.Duration) {
	t.Helper()
	deadline := time.Now().Add(bound)
	for countMessages(api, part) == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("no message containing %q; got %+v", part, api.Messages(42))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func countType(evs []domain.Event, typ string) int {
	n := 0
	for _, e := range evs {
		if e.Type == typ {
			n++
		}
	}
	return n
}

// taskEvents are the events of every task stream, in log order.
func taskEvents(t *testing.T, s eventstore.Store) []domain.Event {
	t.Helper()
	evs := wholeLog(t, s)
	var out []domain.Event
	for _, e := range evs {
		if strings.HasPrefix(e.StreamID, "task-") {
			out = append(out, e)
		}
	}
	return out
}
