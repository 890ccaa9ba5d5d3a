package main

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/omega-gateway/omega/app"
	"github.com/omega-gateway/omega/cmd/cli"
	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/domain/sender"
	"github.com/omega-gateway/omega/eventstore"
)

// An event a read model cannot apply is skipped by replay and verify
// alike (verify stays clean) and listed by omega doctor.
func TestPoisonedEventInReplayAndDoctor(t *testing.T) {
	t.Setenv("OMEGA_DATA_DIR", t.TempDir())
	t.Setenv("OMEGA_DATABASE_URL", "")
	t.Setenv("OMEGA_CLAUDE_BIN", filepath.Join(t.TempDir(), "no-such-claude"))
	t.Setenv("OMEGA_TELEGRAM_TOKEN", "")
	ctx := context.Background()
	a, err := cli.Open(ctx, app.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	bad := domain.NewEvent{ID: uuid.New(), Type: "FactRecorded", Data: json.RawMessage(`{"key": 5}`)}
	res, err := a.Store.Append(ctx, sender.SenderStream("telegram", "1"), eventstore.Any, bad)
	a.Close()
	if err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"--verify"}, {}, {"--verify"}} {
		var out bytes.Buffer
		cmd := replayCmd()
		cmd.SetArgs(args)
		cmd.SetOut(&out)
		cmd.SetErr(&bytes.Buffer{})
		if err := cmd.ExecuteContext(ctx); err != nil {
			t.Fatalf("replay %v: %v\n%s", args, err, out.String())
		}
		if !strings.Contains(out.String(), "1 event(s) skipped by read models as poisoned") {
			t.Fatalf("replay %v does not report the skip:\n%s", args, out.String())
		}
	}
	var out bytes.Buffer
	root := rootCmd()
	root.SetArgs([]string{"doctor"})
	root.SetOut(&out)
	root.SetErr(&bytes.Buffer{})
	_ = root.ExecuteContext(ctx)
	want := "facts skipped FactRecorded at position " + strconv.FormatInt(res.Positions[0], 10)
	if !strings.Contains(out.String(), "1 event(s) skipped by read models") || !strings.Contains(out.String(), want) {
		t.Fatalf("doctor does not list the poisoned event (%q):\n%s", want, out.String())
	}
}
