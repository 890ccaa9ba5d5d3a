package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/omega-gateway/omega/app"
	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/domain/turn"
	"github.com/omega-gateway/omega/handlers/asof"
)

// recordedContext is the ContextBuilt a turn recorded.
func recordedContext(t *testing.T, s interface {
	Load(context.Context, string, int64) ([]domain.Event, error)
}, id string) turn.ContextBuilt {
	t.Helper()
	evs, err := s.Load(context.Background(), domain.TurnStream(id), 1)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range evs {
		if e.Type == (turn.ContextBuilt{}).EventType() {
			p, err := app.NewRegistry().Decode(e)
			if err != nil {
				t.Fatal(err)
			}
			return p.(turn.ContextBuilt)
		}
	}
	t.Fatalf("turn %s built no context", id)
	return turn.ContextBuilt{}
}

// omega state, the built binary beside omega serve, with the user's
// environment: at a turn it prints what that turn's context recorded; at
// a wall-clock time in the owner's zone, the facts of that time; without
// --at, now's; a bad --at is refused with what it accepts.
func TestStateCLI(t *testing.T) {
	eachShutdownBackend(t, []string{"OMEGA_TIMEZONE=Europe/Lisbon"}, func(t *testing.T, bin string, e shutdownEnv, _ *proc) {
		env := append(e.env, "OMEGA_TIMEZONE=Europe/Lisbon")
		run := func(args ...string) string {
			t.Helper()
			out, errs, err := runBin(t, bin, env, args...)
			if err != nil {
				t.Fatalf("omega %s: %v\n%s%s", strings.Join(args, " "), err, out, errs)
			}
			return out
		}
		first := postMessage(t, e.url, "alice", "hello", "30s")
		run("facts", "set", "http:alice", "city", "Lisbon")
		time.Sleep(1100 * time.Millisecond) // the wall-clock form has whole seconds
		lisbon := time.Now()
		time.Sleep(1100 * time.Millisecond)
		second := postMessage(t, e.url, "alice", "and again", "30s")
		run("facts", "set", "http:alice", "city", "Porto")

		var st asof.State
		id := second["turn_id"].(string)
		if err := json.Unmarshal([]byte(run("state", "--sender", "http:alice", "--at", id, "--json")), &st); err != nil {
			t.Fatal(err)
		}
		var short asof.State
		if err := json.Unmarshal([]byte(run("state", "--sender", "http:alice", "--at", id[:8], "--json")), &short); err != nil {
			t.Fatal(err)
		}
		if !short.At.Equal(st.At) || short.Next != st.Next {
			t.Errorf("--at %s (as omega audit prints it) is not the turn's moment: %+v, want %+v", id[:8], short, st)
		}
		c := recordedContext(t, e.open(), id)
		if len(st.Facts) != c.FactsCount || len(st.Facts) != 1 || st.Facts[0] != [2]string{"city", "Lisbon"} {
			t.Errorf("facts at the second turn: %v, its context counted %d", st.Facts, c.FactsCount)
		}
		if st.Next.ConversationID != c.ConversationID || st.Next.ConversationID != first["turn_id"] || st.Next.Session != c.SessionID || c.SessionID == "" {
			t.Errorf("at the second turn: next %+v, its context: conversation %s session %s", st.Next, c.ConversationID, c.SessionID)
		}
		if st.Language != c.Language {
			t.Errorf("language %q, its context %q", st.Language, c.Language)
		}

		wall := lisbon.In(mustZone(t, "Europe/Lisbon")).Format("2006-01-02 15:04:05")
		out := run("state", "--sender", "http:alice", "--at", wall)
		for _, want := range []string{"http:alice as of " + wall, "city: Lisbon", "Conversation: " + first["turn_id"].(string), "[user ", "hello", "open: a message then continued it, resuming session s-"} {
			if !strings.Contains(out, want) {
				t.Errorf("state at %s lacks %q:\n%s", wall, want, out)
			}
		}
		if now := run("state", "--sender", "http:alice"); !strings.Contains(now, "city: Porto") || !strings.Contains(now, "and again") {
			t.Errorf("state now:\n%s", now)
		}
		if nobody := run("state", "--sender", "http:bob"); !strings.Contains(nobody, "No profile recorded yet") {
			t.Errorf("state of a stranger:\n%s", nobody)
		}
		_, errs, err := runBin(t, bin, env, "state", "--sender", "http:alice", "--at", "yesterday-ish")
		if err == nil || !strings.Contains(errs, `--at "yesterday-ish" is neither a time`) {
			t.Errorf("a bad --at: %v\n%s", err, errs)
		}
	})
}

func mustZone(t *testing.T, name string) *time.Location {
	t.Helper()
	loc, err := time.LoadLocation(name)
	if err != nil {
		t.Fatal(err)
	}
	return loc
}

// In Chromium, against omega serve: the sender page's "as of" control
// shows the facts and conversation of the moment entered (in the owner's
// zone), and "now" comes back to the present.
func TestServeSenderPageAsOfBrowser(t *testing.T) {
	browserPath := chromiumPath(t)
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin := buildOmega(t)
	vars, _ := storeBackends()[0].env(t)
	e := newShutdownEnv(t, vars, nil)
	env := append(e.env, "OMEGA_TIMEZONE=America/New_York") // loopback, no token: the API and UI are open
	startServe(t, bin, env)
	waitHTTP(t, e.url)
	first := postMessage(t, e.url, "alice", "hello", "30s")
	if out, errs, err := runBin(t, bin, env, "facts", "set", "http:alice", "city", "Lisbon"); err != nil {
		t.Fatalf("facts set: %v\n%s%s", err, out, errs)
	}
	time.Sleep(1100 * time.Millisecond) // the control has whole seconds
	then := time.Now().In(mustZone(t, "America/New_York")).Format("2006-01-02T15:04:05")
	time.Sleep(1100 * time.Millisecond)
	if out, errs, err := runBin(t, bin, env, "facts", "set", "http:alice", "city", "Porto"); err != nil {
		t.Fatalf("facts set: %v\n%s%s", err, out, errs)
	}

	ctx, closeBrowser := headlessBrowser(browserPath)
	defer closeBrowser()

	var present, past, note, loc string
	// The present page reads the read models, which apply the last fact
	// a moment after the command returned.
	for deadline := time.Now().Add(20 * time.Second); !strings.Contains(present, "Porto") && time.Now().Before(deadline); {
		if err := chromedp.Run(ctx, chromedp.Navigate(e.url+"/ui/senders/http/alice"), chromedp.WaitVisible(`form.asof input[name=at]`),
			chromedp.Text(`main`, &present)); err != nil {
			t.Fatal(err)
		}
	}
	if err := chromedp.Run(ctx,
		chromedp.SetValue(`form.asof input[name=at]`, then),
		chromedp.Click(`form.asof button`),
		chromedp.WaitVisible(`#asof`),
		chromedp.Text(`main`, &past),
		chromedp.Text(`#asof`, &note),
		chromedp.Location(&loc),
	); err != nil {
		t.Fatalf("as of %s: %v", then, err)
	}
	if !strings.Contains(present, "Porto") || strings.Contains(present, "Lisbon") {
		t.Errorf("the present page:\n%s", present)
	}
	if !strings.Contains(past, "Lisbon") || strings.Contains(past, "Porto") {
		t.Errorf("the page as of %s:\n%s", then, past)
	}
	if !strings.Contains(note, strings.Replace(then, "T", " ", 1)) || !strings.Contains(note, first["turn_id"].(string)) {
		t.Errorf("the moment's note: %q", note)
	}
	if !strings.Contains(loc, "at="+strings.ReplaceAll(then, ":", "%3A")) {
		t.Errorf("the page's address %q does not keep the moment", loc)
	}
	if err := chromedp.Run(ctx, chromedp.Click(`form.asof a`), chromedp.WaitVisible(`form.asof`), chromedp.Text(`main`, &present)); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(present, "Porto") {
		t.Errorf("back to now:\n%s", present)
	}
}
