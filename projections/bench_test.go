package projections_test

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/domain/events"
	"github.com/omega-gateway/omega/domain/sender"
	"github.com/omega-gateway/omega/eventstore"
	"github.com/omega-gateway/omega/eventstore/postgres"
	"github.com/omega-gateway/omega/eventstore/sqlite"
	"github.com/omega-gateway/omega/internal/pgtest"
	"github.com/omega-gateway/omega/projections/engine"
	"github.com/omega-gateway/omega/projections/facts"
	"github.com/omega-gateway/omega/projections/projectionstest"
	"github.com/omega-gateway/omega/projections/readmodel"
)

// The replay benchmark seeds a log of sender events once and keeps it
// between runs (a file under os.TempDir for SQLite, a schema for
// PostgreSQL), both keyed by replaySeedVersion and the event count: bump the
// version whenever the seeded mix changes. OMEGA_BENCH_REPLAY_EVENTS
// shrinks the log for a quick look.
const replaySeedVersion = "v1"

const (
	replaySenders  = 10_000
	replayPerFlush = 100 // events per Append while seeding
)

func replayEvents(b *testing.B) int {
	n := 1_000_000
	if s := os.Getenv("OMEGA_BENCH_REPLAY_EVENTS"); s != "" {
		v, err := strconv.Atoi(s)
		if err != nil || v <= 0 {
			b.Fatalf("OMEGA_BENCH_REPLAY_EVENTS=%q: want a positive number", s)
		}
		n = v
	}
	return n
}

// senderPayloads returns the i-th sender's share of the log: a language
// switch now and then, mostly facts recorded (often the same key again,
// as real profiles do), and some removed.
func senderPayloads(snd, n int) []domain.Payload {
	out := make([]domain.Payload, 0, n)
	for j := range n {
		key := fmt.Sprintf("k%d", (j*7+snd)%25)
		switch {
		case j%20 == 0:
			out = append(out, sender.LanguageSwitched{From: "en", To: []string{"es", "en", "de", "fr"}[(snd+j)%4]})
		case j%10 == 5:
			out = append(out, sender.FactRemoved{Key: key})
		default:
			out = append(out, sender.FactRecorded{Key: key, Value: fmt.Sprintf("value %d of sender %d", j, snd), Source: "user"})
		}
	}
	return out
}

// seedReplay appends n events spread evenly over the senders, in appends
// of replayPerFlush events, with a few writers at once.
func seedReplay(b *testing.B, s eventstore.Store, n, writers int) {
	b.Helper()
	ctx := context.Background()
	per := n / replaySenders
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < replaySenders; i += writers {
				count := per
				if i < n%replaySenders {
					count++
				}
				if err := appendSender(ctx, s, i, count); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		b.Fatal(err)
	}
}

func appendSender(ctx context.Context, s eventstore.Store, i, count int) error {
	id := strconv.Itoa(100000 + i)
	stream := sender.SenderStream("telegram", id)
	md := domain.Metadata{Channel: "telegram", Sender: id}
	ps := senderPayloads(i, count)
	var version int64
	for len(ps) > 0 {
		chunk := ps[:min(replayPerFlush, len(ps))]
		ps = ps[len(chunk):]
		evs, err := domain.NewEvents(md, chunk...)
		if err != nil {
			return err
		}
		res, err := s.Append(ctx, stream, eventstore.Exact(version), evs...)
		if err != nil {
			return fmt.Errorf("seed %s: %w", stream, err)
		}
		version = res.ToVersion
	}
	return nil
}

// countLog returns how many events the store holds.
func countLog(b *testing.B, db *sql.DB) int {
	var n int
	if err := db.QueryRow("SELECT count(*) FROM events").Scan(&n); err != nil {
		b.Fatal(err)
	}
	return n
}

// replaySQLite opens (seeding on first use) the cached SQLite log.
func replaySQLite(b *testing.B, n int) projectionstest.Store {
	b.Helper()
	path := filepath.Join(os.TempDir(), fmt.Sprintf("omega-bench-replay-%s-%d.db", replaySeedVersion, n))
	s, err := sqlite.Open(context.Background(), path, sqlite.Options{Logger: projectionstest.Quiet})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	if got := countLog(b, s.DB()); got != n {
		if got != 0 {
			b.Fatalf("cached log %s holds %d events, want %d: delete it", path, got, n)
		}
		b.Logf("seeding %d events into %s (once)", n, path)
		seedReplay(b, s, n, 1)
	}
	return s
}

// replayPostgres opens (seeding on first use) the cached schema
// omega_bench_replay_<version>_<n>, which outlives the run on purpose.
func replayPostgres(b *testing.B, n int) projectionstest.Store {
	b.Helper()
	base := os.Getenv(pgtest.EnvURL)
	if base == "" {
		base = pgtest.DefaultURL
	}
	// pgtest.DSN skips the benchmark when no server answers; its own
	// schema is only used to probe.
	_ = pgtest.DSN(b)
	schema := fmt.Sprintf("omega_bench_replay_%s_%d", replaySeedVersion, n)
	admin, err := sql.Open("postgres", base)
	if err != nil {
		b.Fatal(err)
	}
	defer admin.Close()
	if _, err := admin.Exec("CREATE SCHEMA IF NOT EXISTS " + schema); err != nil {
		b.Fatalf("create schema %s: %v", schema, err)
	}
	u, err := url.Parse(base)
	if err != nil {
		b.Fatalf("%s must be a URL for this benchmark", pgtest.EnvURL)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	s, err := postgres.Open(context.Background(), u.String(), postgres.Options{Logger: projectionstest.Quiet})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	if got := countLog(b, s.DB()); got != n {
		if got != 0 {
			b.Fatalf("cached schema %s holds %d events, want %d: DROP SCHEMA %s CASCADE", schema, got, n, schema)
		}
		b.Logf("seeding %d events into schema %s (once)", n, schema)
		seedReplay(b, s, n, 8)
	}
	return s
}

// BenchmarkReplayFacts1M rebuilds the facts projection from the whole log;
// its readall sub-benchmark reads the same log with ReadAll only, in the
// engine's batch size, as the raw reference for the projection's cost.
func BenchmarkReplayFacts1M(b *testing.B) {
	opens := []struct {
		name    string
		dialect readmodel.Dialect
		open    func(b *testing.B, n int) projectionstest.Store
	}{
		{"sqlite", readmodel.SQLite, replaySQLite},
		{"postgres", readmodel.Postgres, replayPostgres},
	}
	for _, o := range opens {
		b.Run(o.name, func(b *testing.B) {
			n := replayEvents(b)
			s := o.open(b, n)
			reg := newRegistry()
			eng := engine.New(s.DB(), s, o.dialect, reg, projectionstest.Quiet, facts.ReadModel{})
			b.Run("readall", func(b *testing.B) {
				ctx := context.Background()
				for b.Loop() {
					start := time.Now()
					read := readAll(b, ctx, s, eng.BatchSize)
					if read != n {
						b.Fatalf("read %d events, want %d", read, n)
					}
					reportReplay(b, n, start)
				}
			})
			b.Run("rebuild", func(b *testing.B) {
				ctx := context.Background()
				for b.Loop() {
					start := time.Now()
					if err := eng.Rebuild(ctx, eng.Projections(), nil); err != nil {
						b.Fatal(err)
					}
					reportReplay(b, n, start)
				}
				b.StopTimer()
				checkReplayed(b, s.DB(), n)
			})
		})
	}
}

func newRegistry() *domain.Registry {
	r := events.NewRegistry()
	return r
}

func readAll(b *testing.B, ctx context.Context, s eventstore.Store, batch int) int {
	var pos int64
	read := 0
	for {
		evs, err := s.ReadAll(ctx, pos, batch)
		if err != nil {
			b.Fatal(err)
		}
		read += len(evs)
		if len(evs) < batch {
			return read
		}
		pos = evs[len(evs)-1].Position
	}
}

func reportReplay(b *testing.B, n int, start time.Time) {
	b.ReportMetric(float64(n)/time.Since(start).Seconds(), "events/s")
}

// checkReplayed guards against a fast benchmark of a replay that did
// nothing: every seeded sender has a row, and the checkpoint is at the end.
func checkReplayed(b *testing.B, db *sql.DB, n int) {
	var senders int
	if err := db.QueryRow("SELECT count(*) FROM senders").Scan(&senders); err != nil {
		b.Fatal(err)
	}
	if want := min(n, replaySenders); senders != want {
		b.Fatalf("senders after replay: %d, want %d", senders, want)
	}
	var pos, last int64
	if err := db.QueryRow("SELECT position FROM checkpoints WHERE name = 'projection:facts'").Scan(&pos); err != nil {
		b.Fatal(err)
	}
	if err := db.QueryRow("SELECT max(position) FROM events").Scan(&last); err != nil {
		b.Fatal(err)
	}
	if pos != last {
		b.Fatalf("checkpoint at %d after replay, log ends at %d", pos, last)
	}
}

// TestFactsBatchMatchesOneByOne checks that the batched apply the replay
// benchmark measures leaves the same rows as applying event by event (the
// path SkipBad takes), over a mix with every sender event type.
func TestFactsBatchMatchesOneByOne(t *testing.T) {
	ctx := context.Background()
	s, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "omega.db"), sqlite.Options{Logger: projectionstest.Quiet})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for i := range 30 {
		id := strconv.Itoa(i)
		md := domain.Metadata{Channel: "telegram", Sender: id}
		ps := []domain.Payload{sender.Welcomed{Name: "n" + id, Language: "en"}}
		ps = append(ps, senderPayloads(i, 40)...)
		ps = append(ps, sender.PersonalitySet{Personality: "terse"}, sender.FactRecorded{Key: "k1", Value: "late"})
		if i%3 == 0 {
			ps = append(ps, sender.FactsPurged{Count: 3}, sender.FactRecorded{Key: "k2", Value: "after purge"}, sender.Welcomed{Language: "de"})
		}
		evs, err := domain.NewEvents(md, ps...)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Append(ctx, sender.SenderStream("telegram", id), eventstore.Exact(0), evs...); err != nil {
			t.Fatal(err)
		}
	}
	dump := func(skipBad bool) string {
		e := engine.New(s.DB(), s, readmodel.SQLite, newRegistry(), projectionstest.Quiet, facts.ReadModel{})
		e.BatchSize, e.SkipBad = 97, skipBad // batches cut through senders
		if err := e.Rebuild(ctx, e.Projections(), nil); err != nil {
			t.Fatal(err)
		}
		var out string
		for _, q := range []string{
			"SELECT sender, channel, sender_id, name, language, personality, coalesce(welcomed_at, 0), version FROM senders ORDER BY sender",
			"SELECT sender, key, value, source, updated_at FROM facts ORDER BY sender, key",
		} {
			rows, err := s.DB().Query(q)
			if err != nil {
				t.Fatal(err)
			}
			cols, _ := rows.Columns()
			vals := make([]any, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			for rows.Next() {
				if err := rows.Scan(ptrs...); err != nil {
					t.Fatal(err)
				}
				out += fmt.Sprintln(vals...)
			}
			if err := rows.Err(); err != nil {
				t.Fatal(err)
			}
			rows.Close()
		}
		return out
	}
	batched, single := dump(false), dump(true)
	if batched != single {
		t.Errorf("batched replay differs from one by one:\nbatched:\n%s\none by one:\n%s", batched, single)
	}
	if len(batched) < 1000 {
		t.Errorf("suspiciously little state after replay:\n%s", batched)
	}
}
