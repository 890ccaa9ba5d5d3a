package main

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/omega-gateway/omega/cmd/cli"
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
