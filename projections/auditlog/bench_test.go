package auditlog_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/omega-gateway/omega/projections/projectionstest"

	"github.com/omega-gateway/omega/projections/engine"
	"github.com/omega-gateway/omega/projections/readmodel"

	"github.com/omega-gateway/omega/eventstore/postgres"
	"github.com/omega-gateway/omega/eventstore/sqlite"
	"github.com/omega-gateway/omega/internal/pgtest"
	"github.com/omega-gateway/omega/projections"
	"github.com/omega-gateway/omega/projections/auditlog"
)

// auditRows is how many audit rows BenchmarkAuditQuery seeds: 1M, or
// OMEGA_BENCH_AUDIT_ROWS for a quick look.
func auditRows(b *testing.B) int {
	if s := os.Getenv("OMEGA_BENCH_AUDIT_ROWS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n <= 0 {
			b.Fatalf("OMEGA_BENCH_AUDIT_ROWS=%q: want a positive number", s)
		}
		return n
	}
	return 1_000_000
}

// seedAuditRows fills the audit with n synthetic rows, one a second
// ending now: 1000 senders on three channels, 5% denied, 5% failed, 1%
// acknowledged while busy, two models, ten projects.
func seedAuditRows(b *testing.B, s projectionstest.Store, d readmodel.Dialect, n int) time.Time {
	b.Helper()
	ctx := context.Background()
	eng := engine.New(s.DB(), s, d, projectionstest.TurnsRegistry(), projectionstest.Quiet, projections.Turns{})
	if err := eng.Setup(ctx); err != nil {
		b.Fatal(err)
	}
	source := `WITH RECURSIVE s(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM s WHERE n < $1) SELECT n FROM s`
	if d == readmodel.Postgres {
		source = `SELECT n FROM generate_series(1, $1::bigint) n`
	}
	end := time.Now()
	base := end.Add(-time.Duration(n) * time.Second).UnixMicro()
	q := fmt.Sprintf(`INSERT INTO audit (turn_id, at, sender, channel, sender_id, project, conversation_id, input, output, provider, model,
		duration_ms, prompt_bytes, reply_bytes, status, acked, received_at, latency_ms, usage_reported, input_tokens, output_tokens)
		SELECT 'turn-' || n, %[1]d + n * 1000000, 'telegram-' || (n %% 1000), CASE n %% 3 WHEN 0 THEN 'telegram' WHEN 1 THEN 'whatsapp' ELSE 'http' END,
			'' || (n %% 1000), 'p' || (n %% 10), 'c' || (n %% 5000), 'message number ' || n, 'reply to ' || n, 'claude-code',
			CASE n %% 2 WHEN 0 THEN 'sonnet' ELSE 'opus' END, n %% 5000, 800, 400,
			CASE n %% 20 WHEN 0 THEN 'denied' WHEN 1 THEN 'error' ELSE 'ok' END, CASE n %% 100 WHEN 7 THEN 1 ELSE 0 END, %[1]d + n * 1000000 - 2000000, 2000 + n %% 3000, 1, 1000, 200
		FROM (%[2]s) src`, base, source)
	if _, err := s.DB().ExecContext(ctx, q, n); err != nil {
		b.Fatal(err)
	}
	if d == readmodel.Postgres {
		if _, err := s.DB().ExecContext(ctx, `ANALYZE audit`); err != nil {
			b.Fatal(err)
		}
	} else if _, err := s.DB().ExecContext(ctx, `ANALYZE`); err != nil {
		b.Fatal(err)
	}
	return end
}

// openBenchStore opens a fresh store of dialect d for a benchmark.
func openBenchStore(b *testing.B, d readmodel.Dialect) projectionstest.Store {
	b.Helper()
	var s projectionstest.Store
	var err error
	if d == readmodel.Postgres {
		s, err = postgres.Open(context.Background(), pgtest.DSN(b), postgres.Options{Logger: projectionstest.Quiet})
	} else {
		s, err = sqlite.Open(context.Background(), filepath.Join(b.TempDir(), "omega.db"), sqlite.Options{Logger: projectionstest.Quiet})
	}
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	return s
}

// BenchmarkAuditQuery measures one 50-row page over the seeded audit,
// without and with filters; p95-ms is the 95th percentile of its pages.
func BenchmarkAuditQuery(b *testing.B) {
	n := auditRows(b)
	for _, d := range []readmodel.Dialect{readmodel.SQLite, readmodel.Postgres} {
		b.Run(string(d), func(b *testing.B) {
			s := openBenchStore(b, d)
			start := time.Now()
			end := seedAuditRows(b, s, d, n)
			b.Logf("seeded %d audit rows in %s", n, time.Since(start).Round(time.Millisecond))
			log, err := auditlog.New(s.DB())
			if err != nil {
				b.Fatal(err)
			}
			mid := strconv.FormatInt(end.Add(-time.Duration(n/2)*time.Second).UnixMicro(), 10) + ":turn-"
			filters := []struct {
				name string
				f    auditlog.Filter
			}{
				{"none", auditlog.Filter{}},
				{"sender", auditlog.Filter{Sender: "telegram-42"}},
				{"status_denied", auditlog.Filter{Status: "denied"}},
				{"channel_since_24h", auditlog.Filter{Channel: "whatsapp", Since: end.Add(-24 * time.Hour)}},
				{"model_failed", auditlog.Filter{Model: "opus", Status: "failed"}},
				{"acknowledged", auditlog.Filter{Status: "acknowledged"}},
				{"sender_deep_page", auditlog.Filter{Sender: "telegram-42", After: mid}},
				{"grep_rare", auditlog.Filter{Grep: "number 4242", Limit: 10}},
			}
			for _, tt := range filters {
				b.Run(tt.name, func(b *testing.B) {
					var took []time.Duration
					for b.Loop() {
						t0 := time.Now()
						page, err := log.Query(context.Background(), tt.f)
						if err != nil {
							b.Fatal(err)
						}
						took = append(took, time.Since(t0))
						if len(page.Rows) == 0 {
							b.Fatal("empty page")
						}
					}
					slices.Sort(took)
					b.ReportMetric(float64(took[(len(took)*95+99)/100-1].Microseconds())/1000, "p95-ms")
				})
			}
		})
	}
}
