package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/omega-gateway/omega/internal/freeport"
)

// countingClaude answers every call with 10 tokens in and 5 out ($0.001)
// and logs one line per call, so a test counts the calls made.
func countingClaude(t *testing.T) (bin, calls string) {
	dir := t.TempDir()
	bin, calls = filepath.Join(dir, "claude"), filepath.Join(dir, "calls.log")
	script := `#!/bin/sh
cat > /dev/null
echo call >> "` + calls + `"
printf '{"type":"result","subtype":"success","is_error":false,"result":"done","session_id":"s-%s","model":"claude-test","num_turns":1,"total_cost_usd":0.001,"usage":{"input_tokens":10,"output_tokens":5}}\n' "$$"
`
	if err := os.WriteFile(bin, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return bin, calls
}

func callCount(t *testing.T, path string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return strings.Count(string(b), "call\n")
}

// A sender's daily limit set with `omega budget set` holds at the door:
// through the built binary's HTTP API, the turn over the limit makes no
// provider call and its reply says why and when the limit resets; another
// sender is still answered; `/usage`, `omega budget show`, `omega usage`
// and the web UI's usage page and calls page show the spend.
func TestBudgetThroughTheBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin := buildOmega(t)
	for _, b := range storeBackends() {
		t.Run(b.name, func(t *testing.T) {
			vars, _ := b.env(t)
			claude, calls := countingClaude(t)
			addr := freeport.Addr(t)
			url := "http://" + addr
			env := append(os.Environ(), vars...)
			env = append(env, "OMEGA_CLAUDE_BIN="+claude, "OMEGA_HTTP_ADDR="+addr, "OMEGA_LEASE_TTL=1s", "OMEGA_STATUS_FIRST=0s",
				"OMEGA_CLASSIFY=false", "OMEGA_TIMEZONE=UTC", "OMEGA_BUDGET_MONTHLY=100000tok,50usd", "HOME="+t.TempDir())

			out, errs, err := runBin(t, bin, env, "budget", "set", "--sender", "http:ana", "--daily", "20tok")
			if err != nil || !strings.Contains(out, "http:ana: daily 20tok, monthly unchanged") {
				t.Fatalf("budget set: %v\n%s%s", err, out, errs)
			}
			if _, errs, err := runBin(t, bin, env, "budget", "set", "--sender", "http:ana", "--daily", "20 apples"); err == nil || !strings.Contains(errs, "tok or usd") {
				t.Fatalf("a bad amount was taken: %v %s", err, errs)
			}
			startServe(t, bin, env)
			waitHTTP(t, url)

			for i := range 2 {
				if out := postMessage(t, url, "ana", fmt.Sprintf("question %d", i), "60s"); out["reply"] != "done" {
					t.Fatalf("turn %d under the limit: %v", i+1, out)
				}
			}
			if n := callCount(t, calls); n != 2 {
				t.Fatalf("%d calls after two turns", n)
			}
			over := postMessage(t, url, "ana", "one more question", "60s")
			reply, _ := over["reply"].(string)
			if !strings.Contains(reply, "spending limit") || !strings.Contains(reply, "00:00 UTC") {
				t.Fatalf("the turn over the limit answered %v", over)
			}
			if n := callCount(t, calls); n != 2 {
				t.Fatalf("the turn over the limit called the provider: %d calls", n)
			}
			if out := postMessage(t, url, "bo", "hello", "60s"); out["reply"] != "done" {
				t.Fatalf("a sender without a limit: %v", out)
			}
			usage := postMessage(t, url, "ana", "/usage", "60s")
			if r, _ := usage["reply"].(string); !strings.Contains(r, "you, today: spent 30tok") || !strings.Contains(r, "left 0") {
				t.Fatalf("/usage answered %v", usage)
			}

			show, errs, err := runBin(t, bin, env, "budget", "show", "--sender", "http:ana")
			if err != nil || !strings.Contains(show, "http:ana") || !hasRow(show, "http:ana", "day", "30", "0.0020", "2", "20tok", "0") {
				t.Fatalf("budget show: %v\n%s%s", err, show, errs)
			}
			if !hasRow(show, "everything", "month", "45", "0.0030", "3", "100000tok,50usd") {
				t.Fatalf("budget show lacks everything's month:\n%s", show)
			}
			for by, row := range map[string][]string{
				"sender":  {"http:ana", "2", "0", "30"}, // senders are written channel:id
				"purpose": {"turn", "3", "0", "45"},
				"model":   {"claude-test", "3", "0", "45"},
				"day":     {time.Now().UTC().Format(time.DateOnly), "3", "0", "45"},
			} {
				out, errs, err := runBin(t, bin, env, "usage", "--by", by)
				if err != nil || !hasRow(out, row...) {
					t.Fatalf("usage --by %s: %v\n%s%s", by, err, out, errs)
				}
			}
			if _, errs, err := runBin(t, bin, env, "usage", "--by", "colour"); err == nil || !strings.Contains(errs, "day, sender, purpose or model") {
				t.Fatalf("usage --by colour: %v %s", err, errs)
			}

			// The metrics follow the log: give them a moment.
			for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(100 * time.Millisecond) {
				_, metrics := httpBody(t, url+"/metrics")
				v := metricValue(metrics, `omega_budget_refused_total{purpose="turn",reason="limit"}`)
				if v == "1" {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("/metrics counts %q refused turns:\n%s", v, grepLines(metrics, "omega_budget"))
				}
			}
			code, page := httpBody(t, url+"/ui/usage")
			if code != 200 || !strings.Contains(page, "<svg class=\"chart\"") || !strings.Contains(page, "45 tok / 3 calls</a>") {
				t.Fatalf("/ui/usage: %d\n%s", code, page)
			}
			link := between(page, `<td class="num"><a href="`, `">45 tok`)
			code, callsPage := httpBody(t, url+strings.ReplaceAll(link, "&amp;", "&"))
			if code != 200 || strings.Count(callsPage, "<td>turn</td>") != 3 || !strings.Contains(callsPage, "3 calls, 45 tokens") {
				t.Fatalf("%s: %d\n%s", link, code, callsPage)
			}
			if b.name == "sqlite" {
				spendChartInBrowser(t, url)
			}
		})
	}
}

// spendChartInBrowser loads the usage page in Chromium: the chart has a
// bar per purpose and day, and a day's number leads to the calls it sums.
func spendChartInBrowser(t *testing.T, url string) {
	browserPath := chromiumPath(t)
	ctx, closeBrowser := headlessBrowser(browserPath)
	defer closeBrowser()
	var bars int
	var loc, summary string
	if err := chromedp.Run(ctx,
		chromedp.Navigate(url+"/ui/usage"),
		chromedp.WaitVisible(`svg.chart rect`),
		chromedp.Evaluate(`document.querySelectorAll("svg.chart rect").length`, &bars),
		chromedp.Click(`td.num a`),
		chromedp.WaitVisible(`main p.muted`),
		chromedp.Location(&loc),
		chromedp.Text(`main p.muted`, &summary),
	); err != nil {
		t.Fatalf("the usage page in Chromium: %v", err)
	}
	if bars != 1 || !strings.Contains(loc, "/ui/calls?") || !strings.Contains(summary, "3 calls, 45 tokens") {
		t.Fatalf("%d bars; the day's number led to %s: %q", bars, loc, summary)
	}
}

// hasRow says whether a line of the table holds these fields in order.
func hasRow(table string, fields ...string) bool {
	for _, line := range strings.Split(table, "\n") {
		got := strings.Fields(line)
		i := 0
		for _, f := range got {
			if i < len(fields) && f == fields[i] {
				i++
			}
		}
		if i == len(fields) && len(got) > 0 && got[0] == fields[0] {
			return true
		}
	}
	return false
}

func between(s, before, after string) string {
	_, rest, ok := strings.Cut(s, before)
	if !ok {
		return ""
	}
	out, _, _ := strings.Cut(rest, after)
	return out
}
