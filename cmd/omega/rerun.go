package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/omega-gateway/omega/api/audit"
	"github.com/omega-gateway/omega/app"
	"github.com/omega-gateway/omega/cmd/cli"
	"github.com/omega-gateway/omega/cmd/rerun"
	"github.com/omega-gateway/omega/projections/auditlog"
)

// exitDiffers is the status of a re-run whose events differ.
const exitDiffers = 3

// rerunFlags are the command's own flags beside the re-run's options.
type rerunFlags struct {
	since, out string
}

func rerunCmd() *cobra.Command {
	var o rerun.Options
	var f rerunFlags
	cmd := &cobra.Command{
		Use:   "rerun [TURN_ID]",
		Short: "Re-run a recorded turn in a scratch store and compare its events (exit 3 when they differ)",
		Long: "Copies the turn's message and its sender's state as of its start into a temporary SQLite store,\n" +
			"runs the driver there with the decision inputs the turn recorded (allowlists, pairing, owner,\n" +
			"time zone) and the provider's recorded replies (--live: the configured provider, resuming a fork\n" +
			"of the recorded session), and compares the events with the recorded ones, ids and times aside.\n" +
			"Nothing is written to the live store and nothing is sent. TURN_ID may be the 8 characters\n" +
			"omega audit prints. A differing turn prints a unified diff; --since 24h re-runs every turn\n" +
			"completed since then and prints a summary, one line per differing turn; --out DIR writes\n" +
			"each differing turn's full diff to DIR/TURN_ID.diff.",
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if (len(args) == 1) == (f.since != "") {
				return errors.New("give a TURN_ID or --since, not both")
			}
			a, log, err := openAudit(cmd)
			if err != nil {
				return err
			}
			defer a.Close()
			o.Logger = scratchLogger(a.Logger)
			var ids []string
			if f.since != "" {
				ids, err = turnsSince(cmd, log, f.since)
			} else {
				ids, err = resolveTurn(cmd.Context(), log, args[0])
			}
			if err != nil {
				return err
			}
			return rerunAll(cmd, a, ids, o, f)
		},
	}
	cmd.Flags().BoolVar(&o.Live, "live", false, "call the configured provider instead of replaying the recorded replies")
	cmd.Flags().StringVar(&o.PromptsDir, "prompts", "", "prompt files to use instead of $OMEGA_DATA_DIR/prompts")
	cmd.Flags().StringVar(&o.Model, "model", "", "model to use instead of the configured ones")
	cmd.Flags().StringVar(&f.since, "since", "", "re-run every turn completed since then (RFC 3339 or a duration like 24h)")
	cmd.Flags().StringVar(&f.out, "out", "", "write each differing turn's full diff to this directory (TURN_ID.diff)")
	return cmd
}

// resolveTurn is the turn an id names: a whole id, or the start of one
// completed turn's id (omega audit prints 8 characters).
func resolveTurn(ctx context.Context, log *auditlog.Queries, id string) ([]string, error) {
	id = strings.TrimSpace(id)
	if len(id) == len("00000000-0000-0000-0000-000000000000") {
		return []string{id}, nil
	}
	ids, err := log.TurnsWithPrefix(ctx, id, 2)
	switch {
	case err != nil:
		return nil, err
	case len(ids) == 0:
		return nil, fmt.Errorf("no completed turn id starts with %q (see omega audit)", id)
	case len(ids) > 1:
		return nil, fmt.Errorf("%q starts more than one turn id (%s, %s, ...): give more of it", id, ids[0], ids[1])
	}
	return ids, nil
}

// tally counts a batch's outcomes.
type tally struct {
	identical, differ, failed, notes int
}

func rerunAll(cmd *cobra.Command, a *app.App, ids []string, o rerun.Options, f rerunFlags) error {
	w := cmd.OutOrStdout()
	batch := f.since != ""
	if f.out != "" {
		if err := os.MkdirAll(f.out, 0o755); err != nil {
			return fmt.Errorf("create %s: %w", f.out, err)
		}
	}
	var t tally
	for _, id := range ids {
		start := time.Now()
		res, err := rerun.Run(cmd.Context(), a.Store, a.Registry, a.Config, id, o)
		if err != nil {
			if !batch {
				return err
			}
			t.failed++
			fmt.Fprintf(w, "%s  could not re-run: %v\n", audit.ShortID(id), err)
			continue
		}
		if res.Note != "" {
			t.notes++
		}
		if res.Identical {
			t.identical++
			if !batch {
				fmt.Fprintln(w, "identical")
			}
			a.Logger.Debug("re-ran a turn", "turn", id, "took", time.Since(start).Round(time.Millisecond))
			continue
		}
		t.differ++
		if err := reportDiff(w, res, f, batch); err != nil {
			return err
		}
	}
	if batch {
		printTally(w, t, len(ids), f.out)
	}
	if t.identical != len(ids) {
		return &cli.ExitError{Code: exitDiffers, Err: fmt.Errorf("%d of %d re-runs differ", len(ids)-t.identical, len(ids))}
	}
	return nil
}

// reportDiff prints what changed in a differing turn (a batch: one line;
// one turn: the diff too) and writes the full diff under --out.
func reportDiff(w io.Writer, res rerun.Result, f rerunFlags, batch bool) error {
	fmt.Fprintf(w, "%s  differs: %s\n", audit.ShortID(res.TurnID), strings.Join(res.Changed, ", "))
	if res.Note != "" && !batch {
		fmt.Fprintln(w, "note: "+res.Note)
	}
	full := strings.Join(res.Diff, "\n") + "\n"
	if f.out != "" {
		path := filepath.Join(f.out, res.TurnID+".diff")
		if err := os.WriteFile(path, []byte(full), 0o644); err != nil {
			return fmt.Errorf("write %s: %w", path, err)
		}
	}
	if !batch {
		fmt.Fprint(w, full)
	}
	return nil
}

func printTally(w io.Writer, t tally, total int, out string) {
	fmt.Fprintf(w, "%d of %d turns identical", t.identical, total)
	if t.differ > 0 {
		fmt.Fprintf(w, ", %d differ", t.differ)
	}
	if t.failed > 0 {
		fmt.Fprintf(w, ", %d could not re-run", t.failed)
	}
	fmt.Fprintln(w)
	if t.notes > 0 {
		fmt.Fprintf(w, "%d turns were recorded before their decision inputs: their allowlists follow their recorded decisions\n", t.notes)
	}
	switch {
	case t.differ == 0:
	case out != "":
		fmt.Fprintf(w, "full diffs in %s\n", out)
	default:
		fmt.Fprintln(w, "--out DIR writes each differing turn's full diff")
	}
}

// turnsSince lists the turns completed since, oldest first.
func turnsSince(cmd *cobra.Command, log *auditlog.Queries, since string) ([]string, error) {
	f, err := audit.ParseFilter(func(name string) string {
		if name == "since" {
			return since
		}
		return ""
	}, time.Now())
	if err != nil {
		return nil, err
	}
	f.Limit = auditlog.MaxLimit
	var ids []string
	for {
		page, err := log.Query(cmd.Context(), f)
		if err != nil {
			return nil, err
		}
		for _, r := range page.Rows {
			ids = append(ids, r.TurnID)
		}
		if page.Next == "" {
			break
		}
		f.After = page.Next
	}
	for i, j := 0, len(ids)-1; i < j; i, j = i+1, j-1 {
		ids[i], ids[j] = ids[j], ids[i]
	}
	return ids, nil
}

// scratchLogger is the log of the scratch runs: their warnings and errors,
// everything at OMEGA_LOG_LEVEL=debug. A scratch run's start-up and turn
// lines are no news to the person re-running turns, and --since repeats
// them for every turn.
func scratchLogger(l *slog.Logger) *slog.Logger {
	if l.Enabled(context.Background(), slog.LevelDebug) {
		return l
	}
	return slog.New(atLeast{Handler: l.Handler(), level: slog.LevelWarn})
}

// atLeast passes on the records at or above level.
type atLeast struct {
	slog.Handler
	level slog.Level
}

func (h atLeast) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= h.level && h.Handler.Enabled(ctx, l)
}

func (h atLeast) WithAttrs(as []slog.Attr) slog.Handler {
	return atLeast{Handler: h.Handler.WithAttrs(as), level: h.level}
}

func (h atLeast) WithGroup(name string) slog.Handler {
	return atLeast{Handler: h.Handler.WithGroup(name), level: h.level}
}
