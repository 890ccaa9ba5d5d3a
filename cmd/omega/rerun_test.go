package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/omega-gateway/omega/cmd/cli"
	"github.com/omega-gateway/omega/internal/freeport"
)

// The 8 characters omega audit prints name a turn: a recorded turn that
// differs prints what changed and a unified diff (exit 3), and a turn
// recorded before its decision inputs says so; an id that starts no turn
// is refused in words.
func TestRerunCLIShortID(t *testing.T) {
	turns := seedAuditStore(t, "sqlite")
	run := func(args ...string) (string, error) {
		root := rootCmd()
		var out bytes.Buffer
		root.SetOut(&out)
		root.SetErr(&out)
		root.SetArgs(append([]string{"rerun"}, args...))
		err := root.ExecuteContext(context.Background())
		return out.String(), err
	}
	out, err := run(turns[0].ID[:8])
	var ee *cli.ExitError
	if !errors.As(err, &ee) || ee.Code != exitDiffers {
		t.Fatalf("err %v, want exit 3\n%s", err, out)
	}
	if !strings.HasPrefix(out, turns[0].ID[:8]+"  differs: ") || !strings.Contains(out, "\n--- recorded\n+++ re-run\n@@ -") ||
		!strings.Contains(out, "note: the turn names no recorded decision inputs") {
		t.Fatalf("output:\n%s", out)
	}
	if _, err := run("ffffffff"); err == nil || !strings.Contains(err.Error(), `no completed turn id starts with "ffffffff"`) {
		t.Fatalf("an unknown id: %v", err)
	}
}

// A turn recorded while the provider could not work at all (its CLI not
// installed: omega answered with the explanation and called nothing) re-runs
// identical from a shell where the provider now works: the re-run takes
// the problem from the record, not from the configuration.
func TestRerunOfATurnWhoseProviderCouldNotWork(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin := buildOmega(t)
	data, addr := t.TempDir(), freeport.Addr(t)
	user := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "OMEGA_DATA_DIR=" + data}
	startServe(t, bin, append(user, "OMEGA_HTTP_ADDR="+addr, "OMEGA_CLAUDE_BIN="+filepath.Join(t.TempDir(), "claude")))
	waitHTTP(t, "http://"+addr)
	out := postMessage(t, "http://"+addr, "alice", "hello", "30s")
	if out["status"] != "error" || !strings.Contains(fmt.Sprint(out["reply"]), "can't reach my AI provider") {
		t.Fatalf("the turn without a provider: %v", out)
	}
	claude, _ := crashClaude(t, t.TempDir())
	stdout, stderr, err := runBin(t, bin, append(user, "OMEGA_CLAUDE_BIN="+claude), "rerun", out["turn_id"].(string)[:8])
	if err != nil || strings.TrimSpace(stdout) != "identical" {
		t.Fatalf("omega rerun: %v\n%s%s", err, stdout, stderr)
	}
	// The scratch run's start-up and turn lines stay out of the terminal.
	if strings.Contains(stderr, "level=INFO") {
		t.Errorf("omega rerun logged:\n%s", stderr)
	}
}
