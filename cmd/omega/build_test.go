package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/omega-gateway/omega/channels/telegram/telegramtest"
	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/eventstore"
	"github.com/omega-gateway/omega/internal/freeport"
	"github.com/omega-gateway/omega/providers/providertest"
)

// buildEnv is what a build test's omega runs with: a fake Claude Code
// playing the default topology's agents, a Telegram double for the
// person's chat, and the data directory.
type buildEnv struct {
	bin, ctl, data, url string
	env                 []string
	api                 *telegramtest.Server
	open                func() eventstore.Store
}

func newBuildEnv(t *testing.T, bin string, backend storeBackend) *buildEnv {
	vars, open := backend.env(t)
	b := &buildEnv{bin: bin, ctl: t.TempDir(), api: telegramtest.New(t, tgToken), open: open}
	for _, v := range vars {
		if d, ok := strings.CutPrefix(v, "OMEGA_DATA_DIR="); ok {
			b.data = d
		}
	}
	addr := freeport.Addr(t)
	b.url = "http://" + addr
	b.env = append(os.Environ(), vars...)
	b.env = append(b.env, "OMEGA_CLAUDE_BIN="+providertest.BuildClaude(t, b.ctl), "OMEGA_HTTP_ADDR="+addr, "OMEGA_CLASSIFY=false",
		"OMEGA_WHATSAPP_ENABLED=false", "OMEGA_TELEGRAM_TOKEN="+tgToken, "OMEGA_TELEGRAM_API_URL="+b.api.URL,
		"OMEGA_TELEGRAM_ALLOWED_USERS=42", "OMEGA_STATUS_FIRST=1s", "OMEGA_STATUS_EVERY=10s", "OMEGA_LEASE_TTL=1s", "HOME="+t.TempDir())
	return b
}

func (b *buildEnv) serve(t *testing.T) *proc {
	p := startServe(t, b.bin, b.env)
	waitHTTP(t, b.url)
	return p
}

// omega runs a command of the binary and returns its output and error.
func (b *buildEnv) omega(t *testing.T, args ...string) (string, error) {
	cmd := exec.Command(b.bin, args...)
	cmd.Env = b.env
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func (b *buildEnv) touch(t *testing.T, name string) {
	if err := os.WriteFile(filepath.Join(b.ctl, name), nil, 0o644); err != nil {
		t.Fatal(err)
	}
}

// calls counts the fake's log lines starting with prefix ("start build-qa").
func (b *buildEnv) calls(prefix string) int {
	raw, _ := os.ReadFile(filepath.Join(b.ctl, "calls.log"))
	n := 0
	for _, l := range strings.Split(string(raw), "\n") {
		if strings.HasPrefix(l, prefix) {
			n++
		}
	}
	return n
}

// agentFiles lists the agent files in the workspace.
func (b *buildEnv) agentFiles() []string {
	m, _ := filepath.Glob(filepath.Join(b.data, "workspace", ".claude", "agents", "*.md"))
	return m
}

// buildEvents loads the build's stream, counting each type.
func buildEvents(t *testing.T, s eventstore.Store, id string) ([]domain.Event, map[string]int) {
	evs, err := s.Load(context.Background(), "build-"+id, 1)
	if err != nil {
		t.Fatal(err)
	}
	counts := map[string]int{}
	for _, e := range evs {
		counts[e.Type]++
	}
	return evs, counts
}

// waitFor polls until cond holds, or fails with what.
func waitFor(t *testing.T, bound time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(bound)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// The person asks for a build in chat; the chat shows the start with the
// worst case of agent calls, every phase in order, a delay nudge and the
// final summary; QA fails once and its corrective loop fixes it; a
// reviewer that never passes stops the build at its cap and the person
// is asked; the agent files are gone after success and after failure.
func TestBuildFromChat(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin := buildOmega(t)
	for _, backend := range storeBackends() {
		t.Run(backend.name, func(t *testing.T) {
			b := newBuildEnv(t, bin, backend)
			b.touch(t, "pause-build-delivery")
			b.serve(t)
			b.api.PushText(42, 42, "/build a greeter that says hello")
			waitMessage(t, b.api, "Starting build a-greeter-that-says-hello")
			waitMessageWithin(t, b.api, "is done", 60*time.Second)
			want := []string{"at most 17 agent calls", "Analyzing your request", "Designing the architecture", "Writing the tests",
				"Writing the code", "Checking it works", "Reviewing the code", "Packaging the result", "This is taking a moment",
				"is done", "Your greeter is ready in builds/a-greeter-that-says-hello-"}
			var texts []string
			for _, m := range b.api.Messages(42) {
				texts = append(texts, m.Text)
			}
			all := strings.Join(texts, "\n")
			at := 0
			for _, w := range want {
				i := strings.Index(all[at:], w)
				if i < 0 {
					t.Fatalf("the chat lacks %q after position %d:\n%s", w, at, all)
				}
				at += i
			}
			// 7 phases, QA's corrective loop adds a fix and a new check.
			if n := b.calls("start "); n != 9 || b.calls("start build-developer fix") != 1 || b.calls("start build-qa verify") != 1 {
				t.Fatalf("agent calls: %d\n%s", n, readFile(t, filepath.Join(b.ctl, "calls.log")))
			}
			waitFor(t, 10*time.Second, "agent files removed after success", func() bool { return len(b.agentFiles()) == 0 })
			out, err := b.omega(t, "build", "list")
			if err != nil || !strings.Contains(out, "completed") || !strings.Contains(out, " 9/17 calls") {
				t.Fatalf("build list: %v\n%s", err, out)
			}
			id := strings.Fields(out)[0]
			_, counts := buildEvents(t, b.open(), id)
			if counts["AgentCalled"] != 9 || counts["AgentReplied"] != 9 || counts["LoopIterated"] != 1 || counts["PhaseCompleted"] != 7 || counts["BuildCompleted"] != 1 {
				t.Fatalf("build events: %v", counts)
			}
			show, err := b.omega(t, "build", "show", id[:8])
			if err != nil || !strings.Contains(show, "README.md") || !strings.Contains(show, "corrective loop: 1 fix(es)") || !strings.Contains(show, "VERDICT: fail the greeting is missing") {
				t.Fatalf("build show: %v\n%s", err, show)
			}

			// Agent calls count as provider calls of purpose build.
			stats, err := b.omega(t, "audit", "--stats", "--by", "purpose", "--format", "json")
			var groups []struct {
				Group string
				Calls int
			}
			if err != nil || json.Unmarshal([]byte(stats), &groups) != nil || len(groups) != 1 || groups[0].Group != "build" || groups[0].Calls != 9 {
				t.Fatalf("audit by purpose: %v\n%s", err, stats)
			}

			// The web UI shows the phases as a timeline with each agent's
			// reply and each artifact's hash.
			fields := strings.Fields(out)
			readme := filepath.Join(b.data, "workspace", "builds", fields[len(fields)-1], "README.md")
			sum := sha256.Sum256([]byte(readFile(t, readme)))
			resp, err := http.Get(b.url + "/ui/builds/" + id)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			for _, w := range []string{"analyst", "test-writer", "delivery", "VERDICT: fail the greeting is missing", "1 fix(es)", "README.md", hex.EncodeToString(sum[:])} {
				if !strings.Contains(string(body), w) {
					t.Fatalf("the build's page lacks %q:\n%s", w, body)
				}
			}
			browseBuilds(t, b.url, id, hex.EncodeToString(sum[:]))

			// Escalation: the reviewer never passes; its cap is 2 fixes.
			b.touch(t, "reviewer-fails")
			b.api.PushText(42, 42, "/build a second greeter")
			waitMessageWithin(t, b.api, "needs you", 60*time.Second)
			if n := b.calls("start build-reviewer"); n != 1+3 {
				t.Fatalf("reviewer calls: %d", n)
			}
			waitFor(t, 10*time.Second, "agent files removed after a failure", func() bool { return len(b.agentFiles()) == 0 })

			// The person resumes it from chat once the reviewer is happy.
			b.api.PushText(42, 42, "/build list")
			list := waitMessage(t, b.api, " failed (")
			if !strings.Contains(list, "failed") || !strings.Contains(list, "completed") {
				t.Fatalf("/build list:\n%s", list)
			}
			var failed string
			for _, line := range strings.Split(list, "\n") {
				if strings.Contains(line, "failed") {
					failed = strings.Fields(line)[0]
				}
			}
			if err := os.Remove(filepath.Join(b.ctl, "reviewer-fails")); err != nil {
				t.Fatal(err)
			}
			b.api.PushText(42, 42, "/build resume "+failed)
			waitFor(t, 60*time.Second, "the resumed build done", func() bool { return countMessages(b.api, "is done") == 2 })
			waitFor(t, 10*time.Second, "agent files removed after the resumed build", func() bool { return len(b.agentFiles()) == 0 })
		})
	}
}

func readFile(t *testing.T, path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// The model proposes a build with BUILD_PROPOSAL and the person's yes
// starts it; a message naming a build is offered one without a model
// call, and a no declines it; the build's turns re-run identically, with
// the topology as it was when they ran.
func TestBuildProposalConfirmed(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin := buildOmega(t)
	for _, backend := range storeBackends() {
		t.Run(backend.name, func(t *testing.T) {
			b := newBuildEnv(t, bin, backend)
			b.serve(t)
			// The person's own topology: QA gets one fix, not three.
			toml := filepath.Join(b.data, "topologies", "development", "TOPOLOGY.toml")
			waitFor(t, 10*time.Second, "the default topology deployed", func() bool { _, err := os.Stat(toml); return err == nil })
			edited := strings.Replace(readFile(t, toml), "max = 3", "max = 1", 1)
			if err := os.WriteFile(toml, []byte(edited), 0o644); err != nil {
				t.Fatal(err)
			}
			b.api.PushText(42, 42, "could you make a greeter for me?")
			waitMessage(t, b.api, "Shall I build this? a greeter that says hi")
			b.api.PushText(42, 42, "Yes!")
			waitMessage(t, b.api, "Starting build a-greeter-that-says-hi-")
			waitMessage(t, b.api, "at most 13 agent calls")
			waitMessageWithin(t, b.api, "is done", 60*time.Second)
			b.api.PushText(42, 42, "build me a timer")
			waitMessage(t, b.api, "Shall I build this? build me a timer")
			b.api.PushText(42, 42, "no")
			waitMessage(t, b.api, "OK, no build.")
			if n := b.calls("chat"); n != 1 {
				t.Fatalf("chat calls %d: the keyword and the answers must not call the model", n)
			}
			if out, err := b.omega(t, "build", "list"); err != nil || strings.Count(out, "\n") != 1 || !strings.Contains(out, "completed") {
				t.Fatalf("build list: %v\n%s", err, out)
			}
			out, err := b.omega(t, "rerun", "--since", "1h", "--out", filepath.Join(b.ctl, "diffs"))
			if d, _ := filepath.Glob(filepath.Join(b.ctl, "diffs", "*")); len(d) > 0 {
				t.Logf("diff: %s", readFile(t, d[0]))
			}
			if err != nil || !strings.Contains(out, "4 of 4 turns identical") {
				t.Fatalf("rerun of the build's turns: %v\n%s", err, out)
			}
		})
	}
}

// startBuild starts a build with the CLI, telling chat 42, and returns its id.
func (b *buildEnv) startBuild(t *testing.T, request string) string {
	t.Helper()
	out, err := b.omega(t, "build", "start", "--to", "telegram:42", request)
	// The command may log on stderr first (it imports the topologies when
	// it gets there before the server does).
	for _, line := range strings.Split(out, "\n") {
		if err == nil && strings.HasPrefix(line, "build ") {
			return strings.Fields(line)[1]
		}
	}
	t.Fatalf("build start: %v\n%s", err, out)
	return ""
}

func kill9(t *testing.T, p *proc) {
	t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = p.cmd.Wait()
}

// kill -9 while an agent of each phase type works: after a restart the
// build resumes at that phase and completes; the cut-off call is made
// again, and no call whose reply was recorded is. A build cancelled
// while omega was down leaves no agent files once omega starts again.
func TestBuildKillResume(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin := buildOmega(t)
	cases := []struct{ agent, phaseType string }{
		{"build-analyst", "parse-brief"}, {"build-architect", "standard"},
		{"build-qa", "corrective-loop"}, {"build-delivery", "parse-summary"},
	}
	for _, backend := range storeBackends() {
		t.Run(backend.name, func(t *testing.T) {
			b := newBuildEnv(t, bin, backend)
			p := b.serve(t)
			s := b.open()
			for i, c := range cases {
				starts, ends := b.calls("start "), b.calls("end ")
				before := b.calls("start " + c.agent)
				b.touch(t, "slow-"+c.agent)
				id := b.startBuild(t, fmt.Sprintf("kill test %d", i))
				waitFor(t, 30*time.Second, c.agent+" at work", func() bool { return b.calls("start "+c.agent) > before })
				kill9(t, p)
				if len(b.agentFiles()) == 0 {
					t.Fatalf("%s: no agent files while the build ran", c.phaseType)
				}
				p = b.serve(t)
				waitFor(t, 60*time.Second, c.phaseType+" build completed", func() bool {
					_, counts := buildEvents(t, s, id)
					return counts["BuildCompleted"] == 1
				})
				evs, counts := buildEvents(t, s, id)
				if counts["AgentCalled"] != 9 || counts["AgentReplied"] != 9 {
					t.Fatalf("%s: %v", c.phaseType, counts)
				}
				if got := b.calls("start ") - starts; got != 10 {
					t.Fatalf("%s: %d agent runs, want 9 and the one cut off", c.phaseType, got)
				}
				if got := b.calls("end ") - ends; got != 9 {
					t.Fatalf("%s: %d agent runs finished, want 9", c.phaseType, got)
				}
				seen := map[string]int{}
				for _, e := range evs {
					if e.Type == "AgentCalled" || e.Type == "AgentReplied" {
						var call struct{ Call int }
						_ = json.Unmarshal(e.Data, &call)
						seen[fmt.Sprint(e.Type, call.Call)]++
					}
				}
				for k, n := range seen {
					if n != 1 {
						t.Fatalf("%s: %s recorded %d times", c.phaseType, k, n)
					}
				}
			}
			waitFor(t, 10*time.Second, "agent files removed after the builds", func() bool { return len(b.agentFiles()) == 0 })

			// Cut off, cancelled while omega is down: the next start
			// sweeps the agent files the crash left.
			before := b.calls("start build-architect")
			b.touch(t, "slow-build-architect")
			id := b.startBuild(t, "kill test cancelled")
			waitFor(t, 30*time.Second, "architect at work", func() bool { return b.calls("start build-architect") > before })
			kill9(t, p)
			if len(b.agentFiles()) == 0 {
				t.Fatal("no agent files while the build ran")
			}
			if out, err := b.omega(t, "build", "cancel", id); err != nil {
				t.Fatalf("cancel: %v\n%s", err, out)
			}
			b.serve(t)
			waitFor(t, 10*time.Second, "agent files removed after a crash", func() bool { return len(b.agentFiles()) == 0 })
			time.Sleep(500 * time.Millisecond)
			if n := b.calls("start build-architect"); n != before+1 {
				t.Fatalf("a cancelled build's agent ran again: %d", n-before)
			}
		})
	}
}

// A topology that does not parse or does not validate is refused with
// its file and line, by omega build start and by omega doctor.
func TestBuildTopologyRefused(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin := buildOmega(t)
	b := newBuildEnv(t, bin, storeBackends()[0])
	dir := filepath.Join(b.data, "topologies", "broken")
	if err := os.MkdirAll(filepath.Join(dir, "agents"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "agents", "build-one.md"), []byte("do it"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ toml, want string }{
		{"[topology]\nname = \"broken\"\n\n[[phases]]\nname = \"one\"\nagent = \"build-one\"\nphase_type = \"sideways\"\n",
			"TOPOLOGY.toml:7: phase \"one\": phase_type \"sideways\" is not one of"},
		{"[topology]\nname = \"broken\"\n\n[[phases]]\nname = \"one\"\nagent = \"build-two\"\nphase_type = \"standard\"\n",
			"TOPOLOGY.toml:6: phase \"one\": agent \"build-two\" has no file agents/build-two.md"},
		{"[topology]\nname = \"broken\"\n\n[[phases]]\nname = \"one\"\nagent = \"build-one\"\nphase_type = \"corrective-loop\"\n[phases.retry]\nmax = \"three\"\n",
			"TOPOLOGY.toml:9:"},
		{"[topology]\nversion = 1\nname = broken\n", "TOPOLOGY.toml:3:"},
	} {
		if err := os.WriteFile(filepath.Join(dir, "TOPOLOGY.toml"), []byte(c.toml), 0o644); err != nil {
			t.Fatal(err)
		}
		out, err := b.omega(t, "build", "start", "--topology", "broken", "anything")
		if err == nil || !strings.Contains(out, c.want) {
			t.Fatalf("build start with\n%s\nsaid (%v):\n%s\nwant %q", c.toml, err, out, c.want)
		}
		out, err = b.omega(t, "doctor")
		if err == nil || !strings.Contains(out, "FAIL  topology") || !strings.Contains(out, c.want) {
			t.Fatalf("doctor with\n%s\nsaid (%v):\n%s\nwant %q", c.toml, err, out, c.want)
		}
	}
	if out, err := b.omega(t, "build", "list"); err != nil || !strings.Contains(out, "no builds") {
		t.Fatalf("a refused topology started a build: %v\n%s", err, out)
	}
}

// browseBuilds follows the web UI in a browser from the front page's
// navigation to the builds list and on to the build's page, which shows
// its phases as a timeline with the artifact's hash.
func browseBuilds(t *testing.T, url, id, artifactSum string) {
	t.Helper()
	ctx, closeBrowser := headlessBrowser(chromiumPath(t))
	defer closeBrowser()
	var list, loc, page string
	var phases int
	if err := chromedp.Run(ctx,
		chromedp.Navigate(url+"/ui/"),
		chromedp.Click(`header nav a[href="/ui/builds"]`),
		chromedp.WaitVisible(`td a[href^="/ui/builds/"]`),
		chromedp.Text(`main`, &list),
		chromedp.Click(`td a[href^="/ui/builds/"]`),
		chromedp.WaitVisible(`ol.timeline`),
		chromedp.Location(&loc),
		chromedp.Text(`main`, &page),
		chromedp.Evaluate(`document.querySelectorAll("ol.timeline li").length`, &phases),
	); err != nil {
		t.Fatalf("browsing the builds: %v", err)
	}
	if !strings.Contains(list, "completed") {
		t.Fatalf("the builds list shows:\n%s", list)
	}
	if !strings.HasSuffix(loc, "/ui/builds/"+id) {
		t.Fatalf("the build's link led to %s", loc)
	}
	for _, w := range []string{"analyst", "delivery", "README.md", artifactSum} {
		if !strings.Contains(page, w) {
			t.Fatalf("the build's page in a browser lacks %q:\n%s", w, page)
		}
	}
	if phases < 7 {
		t.Fatalf("the build's timeline shows %d entries, want its 7 phases at least:\n%s", phases, page)
	}
}
