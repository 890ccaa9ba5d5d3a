package app_test

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/omega-gateway/omega/api"
	"github.com/omega-gateway/omega/app"
	"github.com/omega-gateway/omega/internal/pgtest"
	"github.com/omega-gateway/omega/providers"
)

// instantProvider answers at once, so a turn costs only omega's own work.
type instantProvider struct{}

func (instantProvider) Name() string { return "instant" }
func (instantProvider) Complete(_ context.Context, req providers.Request) (providers.Response, error) {
	return providers.Response{Text: "ok", Model: req.Model}, nil
}

const benchSenders = 50

// benchDatabase is a database of its own on the test server, so that its
// pg_stat_database commit counter sees only this benchmark's transactions
// (other tests share the test database).
const benchDatabase = "omega_bench_turns"

// BenchmarkTurn sends b.N messages through the HTTP channel from 50
// senders at once, each POST waiting (?wait=) until the turn completes,
// and reports the latency percentiles of that round trip, turns/s, and
// what a turn writes (events, appends, stored bytes, transactions).
func BenchmarkTurn(b *testing.B) {
	// Read on a connection of its own: the node's may be closed by then.
	pgCommits := func(dsn string) int64 {
		db, err := sql.Open("postgres", dsn)
		if err != nil {
			b.Fatal(err)
		}
		defer db.Close()
		var n int64
		if err := db.QueryRow("SELECT xact_commit FROM pg_stat_database WHERE datname = current_database()").Scan(&n); err != nil {
			b.Fatal(err)
		}
		return n
	}
	// One sender measures a turn's own overhead; fifty measure throughput
	// (their latency is mostly time spent queued behind each other).
	for _, senders := range []int{1, benchSenders} {
		b.Run(fmt.Sprintf("sqlite/senders=%d", senders), func(b *testing.B) {
			benchTurns(b, map[string]string{}, nil, senders)
		})
		b.Run(fmt.Sprintf("postgres/senders=%d", senders), func(b *testing.B) {
			dsn := benchPostgresDSN(b)
			benchTurns(b, map[string]string{"OMEGA_DATABASE_URL": dsn}, func() int64 { return pgCommits(dsn) }, senders)
		})
	}
}

// benchPostgresDSN returns a DSN for a fresh schema in benchDatabase,
// dropped when the benchmark ends.
func benchPostgresDSN(b *testing.B) string { return benchPostgresDSNIn(b, benchDatabase) }

// benchPostgresDSNIn is benchPostgresDSN in the named database.
func benchPostgresDSNIn(b *testing.B, benchDatabase string) string {
	_ = pgtest.DSN(b) // skips when no server answers
	base := os.Getenv(pgtest.EnvURL)
	if base == "" {
		base = pgtest.DefaultURL
	}
	admin, err := sql.Open("postgres", base)
	if err != nil {
		b.Fatal(err)
	}
	defer admin.Close()
	var exists bool
	if err := admin.QueryRow("SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)", benchDatabase).Scan(&exists); err != nil {
		b.Fatal(err)
	}
	if !exists {
		if _, err := admin.Exec("CREATE DATABASE " + benchDatabase); err != nil {
			b.Fatalf("create database %s: %v", benchDatabase, err)
		}
	}
	u, err := url.Parse(base)
	if err != nil {
		b.Fatalf("%s must be a URL for this benchmark", pgtest.EnvURL)
	}
	u.Path = "/" + benchDatabase
	db, err := sql.Open("postgres", u.String())
	if err != nil {
		b.Fatal(err)
	}
	schema := fmt.Sprintf("omega_b_%d", time.Now().UnixNano())
	if _, err := db.Exec("CREATE SCHEMA " + schema); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		if _, err := db.Exec("DROP SCHEMA " + schema + " CASCADE"); err != nil {
			b.Errorf("drop schema %s: %v", schema, err)
		}
		db.Close()
	})
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String()
}

func startBenchNode(b *testing.B, extra map[string]string) (rt *app.Runtime, baseURL string, stop func()) {
	vars := map[string]string{
		"OMEGA_DATA_DIR":     b.TempDir(),
		"OMEGA_LEASE_TTL":    "5s",
		"OMEGA_STATUS_FIRST": "0s",
		"HOME":               b.TempDir(),
	}
	for k, v := range extra {
		vars[k] = v
	}
	n := startNodeWith(b, vars, app.RuntimeOptions{Provider: instantProvider{}})
	return n.rt, n.url, n.stop
}

// turnClient keeps enough idle connections for every sender.
var turnClient = &http.Client{
	Timeout:   60 * time.Second,
	Transport: &http.Transport{MaxIdleConnsPerHost: benchSenders},
}

func sendTurn(baseURL, sender, text string) (api.TurnOut, error) {
	body, _ := json.Marshal(map[string]string{"sender_id": sender, "text": text})
	resp, err := turnClient.Post(baseURL+"/api/messages?wait=30s", "application/json", bytes.NewReader(body))
	if err != nil {
		return api.TurnOut{}, err
	}
	defer resp.Body.Close()
	var out api.TurnOut
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		return out, fmt.Errorf("decode reply: %w", err)
	}
	if out.Status != "ok" {
		return out, fmt.Errorf("turn %s ended %q (HTTP %d)", out.TurnID, out.Status, resp.StatusCode)
	}
	return out, nil
}

func benchTurns(b *testing.B, vars map[string]string, commits func() int64, senders int) {
	rt, baseURL, stop := startBenchNode(b, vars)
	db := rt.DBForTests()
	// First contact (the welcome) is not the steady state: greet everyone
	// before timing.
	var wg sync.WaitGroup
	for s := range senders {
		wg.Go(func() {
			if _, err := sendTurn(baseURL, fmt.Sprintf("bench-%d", s), "hello"); err != nil {
				b.Error(err)
			}
		})
	}
	wg.Wait()
	if b.Failed() {
		b.FailNow()
	}

	var events, appends int64
	countWrites := func() {
		if err := db.QueryRow("SELECT count(*), count(DISTINCT stream_id || '/' || CAST(recorded_at AS TEXT)) FROM events").Scan(&events, &appends); err != nil {
			b.Fatal(err)
		}
	}
	countWrites()
	events0, appends0 := events, appends
	_, head := storedBytes(b, rt.Store, 0)
	var commits0 int64
	if commits != nil {
		commits0 = commits()
	}

	var (
		mu        sync.Mutex
		latencies []time.Duration
	)
	b.ResetTimer()
	start := time.Now()
	runSenders(b, baseURL, b.N, senders, func(d time.Duration) {
		mu.Lock()
		latencies = append(latencies, d)
		mu.Unlock()
	})
	elapsed := time.Since(start)
	b.StopTimer()

	slices.Sort(latencies)
	pct := func(p float64) float64 {
		return float64(latencies[min(len(latencies)-1, int(p*float64(len(latencies))))].Microseconds()) / 1000
	}
	b.ReportMetric(pct(0.50), "p50-ms")
	b.ReportMetric(pct(0.99), "p99-ms")
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "turns/s")
	countWrites()
	b.ReportMetric(float64(events-events0)/float64(b.N), "events/turn")
	b.ReportMetric(float64(appends-appends0)/float64(b.N), "appends/turn")
	// What the turns recorded: each event's data, metadata, stream id and
	// type (prompt texts included).
	stored, _ := storedBytes(b, rt.Store, head)
	b.ReportMetric(float64(stored)/float64(b.N), "stored-B/turn")
	if commits != nil {
		// Every committed transaction of the database, reads included,
		// while the turns ran (a few from this function's own queries and
		// the node's stop). A server backend reports its counts about once
		// a second while busy, and the rest when it goes away: the node is
		// stopped first, or the last second of turns would go uncounted.
		stop()
		time.Sleep(500 * time.Millisecond) // the node's backends exit
		b.ReportMetric(float64(commits()-commits0)/float64(b.N), "xacts/turn")
	}
}

// runSenders sends n messages from benchSenders concurrent senders, each
// waiting for its reply before sending the next, and passes each round
// trip's duration to observe.
func runSenders(b *testing.B, baseURL string, n, senders int, observe func(time.Duration)) {
	b.Helper()
	var next atomic.Int64
	var wg sync.WaitGroup
	for s := range senders {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sender := fmt.Sprintf("bench-%d", s)
			for i := next.Add(1); i <= int64(n); i = next.Add(1) {
				t0 := time.Now()
				if _, err := sendTurn(baseURL, sender, fmt.Sprintf("message %d", i)); err != nil {
					b.Error(err)
					return
				}
				observe(time.Since(t0))
			}
		}()
	}
	wg.Wait()
	if b.Failed() {
		b.FailNow()
	}
}
