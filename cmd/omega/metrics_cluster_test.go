package main

import (
	"fmt"
	"testing"
	"time"
)

// Several processes on one PostgreSQL each count what the log records:
// every process's /metrics shows the whole cluster's turns, wherever they
// ran, as the README says (take max across instances, not sum).
func TestMetricsOfEachProcessCountTheCluster(t *testing.T) {
	c := newCluster(t)
	_, first := c.start(t)
	_, second := c.start(t)
	for i, url := range []string{first, first, second} {
		if out := postMessage(t, url, fmt.Sprintf("m%d", i), "hello", "30s"); out["status"] != "ok" {
			t.Fatalf("turn %d: %v", i, out)
		}
	}
	const series = `omega_turns_total{channel="http",status="ok"}`
	for _, url := range []string{first, second} {
		deadline := time.Now().Add(10 * time.Second)
		for {
			_, body := httpBody(t, url+"/metrics")
			v := metricValue(body, series)
			if v == "3" {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s/metrics: %s = %q, want the cluster's 3 turns\n%s", url, series, v, grepLines(body, "omega_turns_total"))
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
}
