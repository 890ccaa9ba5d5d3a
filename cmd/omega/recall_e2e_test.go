package main

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/omega-gateway/omega/app"
	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/domain/turn"
	"github.com/omega-gateway/omega/internal/freeport"
)

// recallClaude keeps every prompt it is given (on standard input, as
// Claude Code gets it) in dir and answers briefly.
func recallClaude(t *testing.T, dir string) string {
	bin := filepath.Join(dir, "claude")
	script := `#!/bin/sh
prompt=$(cat)
printf '%s' "$prompt" > "` + dir + `/prompt.$$"
case "$prompt" in
  *"Summarize the conversation below"*) result='They talked about a dog.' ;;
  *"Extract durable personal facts"*) result='NONE' ;;
  *) result='Noted.' ;;
esac
printf '{"type":"result","subtype":"success","is_error":false,"result":"%s","session_id":"s-%s","num_turns":1}\n' "$result" "$$"
`
	if err := os.WriteFile(bin, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return bin
}

const (
	annSaid   = "I'm thinking of adopting a retired greyhound from the shelter in Leeds."
	bobSaid   = "My neighbour's greyhound escaped from the shelter in York."
	annAsks   = "Do you remember which dog I wanted to adopt from the shelter?"
	recallURL = "/ui/search?q=greyhound+shelter&sender=http:ann"
)

// Through the built binary, on both backends: a message that asks to
// recall gets the passage of the person's older conversation in the
// prompt the provider is given, with its date, and recorded in its
// ContextBuilt; another person's matching conversation never. omega
// search (the binary), /search and the web UI's search (in Chromium,
// served by omega serve) find the passages, one person's only with
// --sender; omega replay rebuilds the same index.
func TestRecallThroughTheDoor(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin := buildOmega(t)
	for _, b := range storeBackends() {
		t.Run(b.name, func(t *testing.T) {
			vars, open := b.env(t)
			prompts := t.TempDir()
			addr := freeport.Addr(t)
			url := "http://" + addr
			env := append(append(os.Environ(), vars...), "OMEGA_CLAUDE_BIN="+recallClaude(t, prompts), "OMEGA_HTTP_ADDR="+addr,
				"OMEGA_CONVERSATION_IDLE=1s", "OMEGA_TIMEZONE=UTC", "HOME="+t.TempDir())
			startServe(t, bin, env)
			waitHTTP(t, url)

			for _, m := range [][2]string{{"ann", annSaid}, {"bob", bobSaid}} {
				if out := postMessage(t, url, m[0], m[1], "60s"); out["status"] != "ok" {
					t.Fatalf("%s: %v", m[0], out)
				}
			}
			// The conversations go idle (1 s) and are summarized: the next
			// message starts a new one. The margin lets a loaded machine
			// record and apply the summaries before ann writes again.
			time.Sleep(2500 * time.Millisecond)
			out := postMessage(t, url, "ann", annAsks, "60s")
			if out["status"] != "ok" {
				t.Fatalf("recall turn: %v", out)
			}
			prompt := promptWith(t, prompts, annAsks)
			if !strings.Contains(prompt, "Passages from earlier conversations") || !strings.Contains(prompt, annSaid) {
				t.Fatalf("the recall turn's prompt lacks ann's earlier passage:\n%s", prompt)
			}
			if strings.Contains(prompt, "York") {
				t.Fatalf("ann's prompt holds bob's conversation:\n%s", prompt)
			}
			if day := time.Now().UTC().Format("2006-01-02"); !strings.Contains(prompt, "- "+day+" (the user said): "+annSaid) {
				t.Fatalf("the passage is not shown with its date %s:\n%s", day, prompt)
			}
			recalled := recordedRecall(t, open(), out["turn_id"].(string))
			found := false
			for _, r := range recalled {
				if strings.Contains(r.Text, "York") {
					t.Fatalf("ContextBuilt recorded bob's passage: %+v", recalled)
				}
				found = found || (r.Text == annSaid && r.Kind == "user" && r.Turn != "")
			}
			if !found {
				t.Fatalf("ContextBuilt recorded %+v", recalled)
			}

			// A re-run recalls what the turn recalled: its events are the same.
			if stdout, stderr, err := runBin(t, bin, env, "rerun", out["turn_id"].(string)); err != nil || !strings.Contains(stdout, "identical") {
				t.Fatalf("omega rerun of the recall turn: %v\n%s%s", err, stdout, stderr)
			}

			stdout, stderr, err := runBin(t, bin, env, "search", "greyhound", "shelter", "--sender", "http:ann")
			if err != nil || !strings.Contains(stdout, annSaid) || strings.Contains(stdout, "York") || !strings.Contains(stdout, "http:ann  user  turn ") {
				t.Fatalf("omega search --sender http:ann: %v\n%s%s", err, stdout, stderr)
			}
			stdout, stderr, err = runBin(t, bin, env, "search", "greyhound", "--json")
			var hits []struct{ Chat, Text string }
			if err != nil || json.Unmarshal([]byte(stdout), &hits) != nil || len(hits) != 2 || !strings.HasPrefix(hits[0].Chat, "http:") || !strings.HasPrefix(hits[1].Chat, "http:") {
				t.Fatalf("omega search --json: %v\n%s%s", err, stdout, stderr)
			}
			if _, stderr, err = runBin(t, bin, env, "search", "the", "of"); err == nil || !strings.Contains(stderr, "nothing to search for") {
				t.Fatalf("omega search with only common words: %v %s", err, stderr)
			}
			slash := postMessage(t, url, "ann", "/search greyhound", "60s")
			if reply, _ := slash["reply"].(string); !strings.Contains(reply, "Leeds") || strings.Contains(reply, "York") {
				t.Fatalf("/search: %v", slash)
			}
			browseSearch(t, url)

			// omega replay rebuilds the same index: --verify finds no
			// difference, and a full replay finds the same passages.
			before, _, _ := runBin(t, bin, env, "search", "greyhound", "dog", "--json")
			if stdout, stderr, err := runBin(t, bin, env, "replay", "--verify", "--projection", "recall"); err != nil {
				t.Fatalf("replay --verify: %v\n%s%s", err, stdout, stderr)
			}
			if stdout, stderr, err := runBin(t, bin, env, "replay", "--projection", "recall"); err != nil {
				t.Fatalf("replay: %v\n%s%s", err, stdout, stderr)
			}
			if after, _, _ := runBin(t, bin, env, "search", "greyhound", "dog", "--json"); after != before || !strings.Contains(after, "Leeds") {
				t.Fatalf("after omega replay the search finds\n%s\nbefore\n%s", after, before)
			}
		})
	}
}

// promptWith returns the provider prompt that holds text.
func promptWith(t *testing.T, dir, text string) string {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(dir, "prompt.*"))
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err == nil && strings.Contains(string(b), text) && !strings.Contains(string(b), "Summarize the conversation below") {
			return string(b)
		}
	}
	t.Fatalf("no provider prompt holds %q (%d prompts)", text, len(files))
	return ""
}

// recordedRecall reads the passages the turn's ContextBuilt recorded.
func recordedRecall(t *testing.T, s interface {
	Load(ctx context.Context, stream string, from int64) ([]domain.Event, error)
}, turnID string) []turn.RecalledPassage {
	t.Helper()
	evs, err := s.Load(context.Background(), domain.TurnStream(turnID), 1)
	if err != nil {
		t.Fatal(err)
	}
	reg := app.NewRegistry()
	for _, e := range evs {
		if e.Type != (turn.ContextBuilt{}).EventType() {
			continue
		}
		p, err := reg.Decode(e)
		if err != nil {
			t.Fatal(err)
		}
		return p.(turn.ContextBuilt).Recalled
	}
	t.Fatalf("turn %s has no ContextBuilt", turnID)
	return nil
}

// browseSearch types the words into the header's search box in Chromium
// and follows the passage found to its turn.
func browseSearch(t *testing.T, url string) {
	t.Helper()
	ctx, closeBrowser := headlessBrowser(chromiumPath(t))
	defer closeBrowser()
	var results, loc, turnPage string
	if err := chromedp.Run(ctx,
		chromedp.Navigate(url+"/ui/"),
		chromedp.WaitVisible(`header form.search input[name=q]`),
		chromedp.SendKeys(`header form.search input[name=q]`, "greyhound\n"),
		chromedp.WaitVisible(`td.hit a`),
		chromedp.Text(`main`, &results),
	); err != nil {
		t.Fatalf("searching from the header: %v", err)
	}
	if !strings.Contains(results, "Leeds") || !strings.Contains(results, "York") {
		t.Fatalf("everyone's search shows:\n%s", results)
	}
	if err := chromedp.Run(ctx,
		chromedp.Navigate(url+recallURL),
		chromedp.WaitVisible(`td.hit a`),
		chromedp.Text(`main`, &results),
		chromedp.Click(`td.hit a`),
		chromedp.WaitNotPresent(`td.hit`),
		chromedp.Location(&loc),
		chromedp.Text(`main`, &turnPage),
	); err != nil {
		t.Fatalf("ann's search: %v", err)
	}
	if !strings.Contains(results, "Leeds") || strings.Contains(results, "York") {
		t.Fatalf("ann's search shows another person's passage:\n%s", results)
	}
	if !strings.Contains(loc, "/ui/turns/") || !strings.Contains(turnPage, annSaid) {
		t.Fatalf("the passage led to %s:\n%s", loc, turnPage)
	}
	if code, body := httpBody(t, url+"/ui/search?q=greyhound&sender=nocolon"); code != http.StatusBadRequest || !strings.Contains(body, "sender:") {
		t.Fatalf("a bad sender: %d\n%s", code, body)
	}
}
