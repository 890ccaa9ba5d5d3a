package engine_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/projections/engine"
	"github.com/omega-gateway/omega/projections/readmodel"
)

// commitMode records, per event, whether the transaction applying it
// waits for its WAL flush.
type commitMode struct{}

func (commitMode) Name() string     { return "commit_mode" }
func (commitMode) Tables() []string { return []string{"commit_mode"} }
func (commitMode) Schema(_ readmodel.Dialect, t func(string) string) []string {
	return []string{fmt.Sprintf("CREATE TABLE IF NOT EXISTS %s (position BIGINT PRIMARY KEY, mode TEXT NOT NULL)", t("commit_mode"))}
}

func (commitMode) Apply(ctx context.Context, tx *readmodel.Tx, e domain.Event) error {
	_, err := tx.ExecContext(ctx, fmt.Sprintf("INSERT INTO %s (position, mode) SELECT $1, current_setting('synchronous_commit')", tx.T("commit_mode")), e.Position)
	return err
}

// Read models commit without waiting for the disk on PostgreSQL (the
// checkpoint's advance turns synchronous_commit off for its transaction),
// in a live run and a rebuild alike; the log's appends still wait.
func TestReadModelsCommitLazily(t *testing.T) {
	s := backends()[1].Open(t)()
	e := engine.New(s.DB(), s, readmodel.Postgres, registry(), quiet, commitMode{})
	ctx, cancel := context.WithCancel(context.Background())
	if err := e.Setup(ctx); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { defer close(done); _ = e.Run(ctx) }()
	appendFacts(t, s, 12, "lazy")
	waitApplied(t, s, "commit_mode")
	cancel()
	<-done
	if err := e.Rebuild(context.Background(), e.Projections(), nil); err != nil {
		t.Fatal(err)
	}
	var modes []string
	rows, err := s.DB().Query("SELECT DISTINCT mode FROM commit_mode")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var m string
		if err := rows.Scan(&m); err != nil {
			t.Fatal(err)
		}
		modes = append(modes, m)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if len(modes) != 1 || modes[0] != "off" {
		t.Fatalf("read models committed with synchronous_commit %v, want only off", modes)
	}
	var logMode string
	if err := s.DB().QueryRow("SELECT current_setting('synchronous_commit')").Scan(&logMode); err != nil {
		t.Fatal(err)
	}
	if logMode != "on" {
		t.Fatalf("the pool's connections have synchronous_commit %s, want on", logMode)
	}
}
