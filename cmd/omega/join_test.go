package main

import (
	"fmt"
	"net/http"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/omega-gateway/omega/internal/freeport"
	"github.com/omega-gateway/omega/internal/pgtest"
)

// waitReady polls /readyz until it answers 200; false when it did not
// within bound.
func waitReady(url string, bound time.Duration) bool {
	deadline := time.Now().Add(bound)
	for time.Now().Before(deadline) {
		resp, err := http.Get(url + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return true
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	return false
}

// clusterEnv is one process's environment on a shared database.
func clusterEnv(tb testing.TB, dsn, claude, addr string) []string {
	return append(os.Environ(), "OMEGA_DATABASE_URL="+dsn, "OMEGA_DATA_DIR="+tb.TempDir(), "HOME="+tb.TempDir(),
		"OMEGA_CLAUDE_BIN="+claude, "OMEGA_HTTP_ADDR="+addr, "OMEGA_STATUS_FIRST=0s", "OMEGA_CLASSIFY=false")
}

// Processes started together on a fresh database each become ready and
// answer: the one that migrates the schema holds the others back only
// while it does, and each then takes messages.
func TestProcessesStartedTogetherBecomeReady(t *testing.T) {
	dsn := pgtest.DSN(t)
	bin := buildOmega(t)
	claude, _ := crashClaude(t, t.TempDir())
	var urls []string
	for range 3 {
		addr := freeport.Addr(t)
		startServe(t, bin, clusterEnv(t, dsn, claude, addr))
		urls = append(urls, "http://"+addr)
	}
	for i, url := range urls {
		if !waitReady(url, 30*time.Second) {
			t.Fatalf("process %d never became ready", i)
		}
		out := postMessage(t, url, fmt.Sprintf("joiner-%d", i), "hello", "30s")
		if out["status"] != "ok" {
			t.Fatalf("process %d answered %v", i, out)
		}
	}
}

// BenchmarkReady measures how long omega serve takes to answer /readyz
// 200: four processes started together on a fresh database (the slowest
// of them), and a process joining one that is serving senders.
//
//	go test -run '^$' -bench Ready -benchtime 3x ./cmd/omega/
func BenchmarkReady(b *testing.B) {
	bin := buildOmega(b)
	claude, _ := crashClaude(b, b.TempDir())
	b.Run("together=4", func(b *testing.B) {
		var took []time.Duration
		for range b.N {
			dsn := pgtest.DSN(b)
			start := time.Now()
			var wg sync.WaitGroup
			var procs []*proc
			for range 4 {
				addr := freeport.Addr(b)
				procs = append(procs, startServe(b, bin, clusterEnv(b, dsn, claude, addr)))
				wg.Go(func() {
					if !waitReady("http://"+addr, time.Minute) {
						b.Error("a process never became ready")
					}
				})
			}
			wg.Wait()
			took = append(took, time.Since(start))
			for _, p := range procs { // each holds dozens of connections
				_ = p.cmd.Process.Kill()
				_ = p.cmd.Wait()
			}
		}
		b.ReportMetric(medianMs(took), "slowest-ready-ms")
	})
	b.Run("join", func(b *testing.B) {
		dsn := pgtest.DSN(b)
		first := "http://" + freeport.Addr(b)
		startServe(b, bin, clusterEnv(b, dsn, claude, first[len("http://"):]))
		if !waitReady(first, time.Minute) {
			b.Fatal("the first process never became ready")
		}
		var took []time.Duration
		for i := range b.N {
			for s := range 20 {
				postMessage(b, first, fmt.Sprintf("busy-%d-%d", i, s), "hello", "0s")
			}
			addr := freeport.Addr(b)
			start := time.Now()
			p := startServe(b, bin, clusterEnv(b, dsn, claude, addr))
			if !waitReady("http://"+addr, time.Minute) {
				b.Fatal("the joining process never became ready")
			}
			took = append(took, time.Since(start))
			_ = p.cmd.Process.Kill()
			_ = p.cmd.Wait()
		}
		b.ReportMetric(medianMs(took), "join-ready-ms")
	})
}
