package main

import (
	"encoding/csv"
	"io"
	"net/http"
	"os/exec"
	"strings"
	"testing"
	"time"
)

func httpBody(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// omega serve: /metrics moves when a turn runs, /readyz is ready, and the
// turn is in GET /api/audit with its usage unknown (the fake CLI reports
// none) rather than zero.
func TestServeMetricsAndAudit(t *testing.T) {
	eachShutdownBackend(t, nil, func(t *testing.T, bin string, e shutdownEnv, _ *proc) {
		if code, body := httpBody(t, e.url+"/readyz"); code != 200 || body != "ready\n" {
			t.Fatalf("/readyz: %d %q", code, body)
		}
		const series = `omega_turns_total{channel="http",status="ok"}`
		if _, body := httpBody(t, e.url+"/metrics"); strings.Contains(body, series) {
			t.Fatalf("a turn counted before any ran:\n%s", body)
		}
		out := postMessage(t, e.url, "ops", "count me, please", "60s")
		if out["status"] != "ok" {
			t.Fatalf("turn: %v", out)
		}
		deadline := time.Now().Add(20 * time.Second)
		for {
			_, body := httpBody(t, e.url+"/metrics")
			if strings.Contains(body, series+" 1") && strings.Contains(body, `omega_provider_call_duration_seconds_count{outcome="ok"} 1`) &&
				strings.Contains(body, "omega_event_append_duration_seconds_count") {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("/metrics did not move:\n%s", body)
			}
			time.Sleep(50 * time.Millisecond)
		}
		var recs [][]string
		for {
			code, body := httpBody(t, e.url+"/api/audit?format=csv&sender=http:ops")
			var err error
			recs, err = csv.NewReader(strings.NewReader(body)).ReadAll()
			if code != 200 || err != nil {
				t.Fatalf("audit %d (%v): %s", code, err, body)
			}
			if len(recs) == 2 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("the turn never reached the audit: %s", body)
			}
			time.Sleep(50 * time.Millisecond)
		}
		head, row := recs[0], recs[1]
		col := func(name string) string {
			for i, h := range head {
				if h == name {
					return row[i]
				}
			}
			t.Fatalf("no column %s", name)
			return ""
		}
		if col("input") != "count me, please" || col("status") != "answered" || col("outcome") != "ok" || col("input_tokens") != "" || col("cost_usd") != "" || col("calls") != "1" || col("prompt_bytes") == "0" {
			t.Fatalf("audit row %q", row)
		}

		// The turn re-runs identical, alone and in a batch, while the
		// server runs.
		for args, want := range map[string]string{col("turn_id"): "identical\n", "--since 1h": "1 of 1 turns identical\n"} {
			cmd := exec.Command(bin, append([]string{"rerun"}, strings.Fields(args)...)...)
			cmd.Env = e.env
			out, err := cmd.Output()
			if err != nil || !strings.HasSuffix(string(out), want) {
				t.Fatalf("omega rerun %s: %v\n%s", args, err, out)
			}
		}
	})
}
