package app_test

import (
	"bytes"
	"database/sql"
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/omega-gateway/omega/api"
)

// BenchmarkTurnLoad runs one process on PostgreSQL with 20, 200 and 1,000
// senders at once, each sending its next message when the reply to the
// last one came back (a closed loop), for what a turn costs as the number
// of waiting senders grows: turns/s, CPU per turn (this test process: the
// node and its HTTP clients), and per turn the database's transactions
// and rows read (pg_stat_database). The cost per turn should not grow
// with the senders.
//
//	go test -run '^$' -bench TurnLoad -benchtime 4000x -timeout 30m ./app/
func BenchmarkTurnLoad(b *testing.B) {
	for _, senders := range []int{20, 200, 1000} {
		b.Run(fmt.Sprintf("postgres/senders=%d", senders), func(b *testing.B) {
			benchTurnLoad(b, senders)
		})
	}
}

// dbCounters are the database-wide counters of pg_stat_database.
type dbCounters struct{ commits, returned, fetched int64 }

func readCounters(b *testing.B, dsn string) dbCounters {
	db, err := sql.Open("postgres", dsn)
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	var c dbCounters
	if err := db.QueryRow(`SELECT xact_commit, tup_returned, tup_fetched FROM pg_stat_database
		WHERE datname = current_database()`).Scan(&c.commits, &c.returned, &c.fetched); err != nil {
		b.Fatal(err)
	}
	return c
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func benchTurnLoad(b *testing.B, senders int) {
	dsn := benchPostgresDSNIn(b, "omega_bench_load")
	// The default lease TTL, as a served process has it.
	_, baseURL, stop := startBenchNode(b, map[string]string{"OMEGA_DATABASE_URL": dsn, "OMEGA_LEASE_TTL": "15s"})
	client := &http.Client{Timeout: 120 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: senders}}
	send := func(sender, text string) error {
		body, _ := json.Marshal(map[string]string{"sender_id": sender, "text": text})
		resp, err := client.Post(baseURL+"/api/messages?wait=60s", "application/json", bytes.NewReader(body))
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		var out api.TurnOut
		if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
			return fmt.Errorf("decode reply: %w", err)
		}
		if out.Status != "ok" {
			return fmt.Errorf("turn %s ended %q (HTTP %d)", out.TurnID, out.Status, resp.StatusCode)
		}
		return nil
	}
	// First contact (the welcome) is not the steady state.
	var wg sync.WaitGroup
	for s := range senders {
		wg.Go(func() {
			if err := send(fmt.Sprintf("load-%d", s), "hello"); err != nil {
				b.Error(err)
			}
		})
	}
	wg.Wait()
	if b.Failed() {
		b.FailNow()
	}
	c0, cpu0 := readCounters(b, dsn), cpuTime()
	b.ResetTimer()
	start := time.Now()
	var next atomic.Int64
	for s := range senders {
		wg.Go(func() {
			for i := next.Add(1); i <= int64(b.N); i = next.Add(1) {
				if err := send(fmt.Sprintf("load-%d", s), fmt.Sprintf("message %d", i)); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	elapsed, cpu := time.Since(start), cpuTime()-cpu0
	b.StopTimer()
	// A backend reports its counters when it goes away: stop the node.
	stop()
	time.Sleep(500 * time.Millisecond)
	c := readCounters(b, dsn)
	n := float64(b.N)
	b.ReportMetric(n/elapsed.Seconds(), "turns/s")
	b.ReportMetric(float64(cpu.Microseconds())/1000/n, "cpu-ms/turn")
	b.ReportMetric(float64(c.commits-c0.commits)/n, "xacts/turn")
	b.ReportMetric(float64(c.returned-c0.returned+c.fetched-c0.fetched)/n, "rows/turn")
}
