package app_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/omega-gateway/omega/api"
	"github.com/omega-gateway/omega/app"
)

// BenchmarkStreamingReply measures what a person waits for over HTTP: the
// time from sending a message to the first visible words of the reply
// (the first "text" event of the turn's stream) and to the final reply,
// p50 and p95, with a model that answers like a real one (first token
// after 800 ms, then 120 words at 25 ms each), for 1 and 5 people at
// once; "whole" is the same with OMEGA_STREAMING=off, where the first
// words come with the final reply. Run with -benchtime=10x or more for
// meaningful percentiles.
func BenchmarkStreamingReply(b *testing.B) {
	words := make([]byte, 0, 120*6)
	for i := range 120 {
		words = fmt.Appendf(words, "word%d ", i)
	}
	for _, mode := range []string{"stream", "whole"} {
		for _, users := range []int{1, 5} {
			b.Run(fmt.Sprintf("%s/users=%d", mode, users), func(b *testing.B) {
				benchStreaming(b, mode, users, string(words))
			})
		}
	}
}

func benchStreaming(b *testing.B, mode string, users int, reply string) {
	model := &streamingModel{First: 800 * time.Millisecond, Every: 25 * time.Millisecond, Reply: reply}
	vars := map[string]string{
		"OMEGA_DATA_DIR": b.TempDir(), "OMEGA_LEASE_TTL": "5s", "OMEGA_STATUS_FIRST": "0s",
		"OMEGA_CLASSIFY": "false", "HOME": b.TempDir(), "OMEGA_STREAMING": "on",
	}
	if mode == "whole" {
		vars["OMEGA_STREAMING"] = "off"
	}
	n := startNodeWith(b, vars, app.RuntimeOptions{Provider: model})
	var wg sync.WaitGroup
	for u := range users {
		wg.Go(func() { // first contact (the welcome) is not the steady state
			if _, err := sendTurn(n.url, fmt.Sprintf("user-%d", u), "hello"); err != nil {
				b.Error(err)
			}
		})
	}
	wg.Wait()
	var mu sync.Mutex
	var first, final []time.Duration
	b.ResetTimer()
	for range b.N {
		for u := range users {
			wg.Go(func() {
				f, l, err := timeReply(b.Context(), n.url, fmt.Sprintf("user-%d", u))
				if err != nil {
					b.Error(err)
					return
				}
				mu.Lock()
				first, final = append(first, f), append(final, l)
				mu.Unlock()
			})
		}
		wg.Wait()
	}
	b.StopTimer()
	report(b, "first", first)
	report(b, "final", final)
}

// timeReply sends one message and follows its turn's stream: the time to
// the first visible text and to the final reply.
func timeReply(ctx context.Context, baseURL, sender string) (first, final time.Duration, err error) {
	start := time.Now()
	id, err := postAsync(ctx, baseURL, sender, "tell me a story")
	if err != nil {
		return 0, 0, err
	}
	events := make(chan sseEvent, 256)
	errc := make(chan error, 1)
	go func() { errc <- readStream(ctx, baseURL+"/api/turns/"+id+"/stream", events) }()
	for ev := range events {
		if first == 0 {
			first = ev.At.Sub(start) // a text event, or the final one
		}
		if ev.Name == "final" {
			final = ev.At.Sub(start)
		}
	}
	return first, final, <-errc
}

// postAsync records a message and returns its turn without waiting for
// the reply.
func postAsync(ctx context.Context, baseURL, sender, text string) (string, error) {
	body, _ := json.Marshal(map[string]string{"sender_id": sender, "text": text})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, baseURL+"/api/messages", bytes.NewReader(body))
	if err != nil {
		return "", err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := turnClient.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	var out api.TurnOut
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		return "", fmt.Errorf("post answered %s: %w", resp.Status, err)
	}
	if out.TurnID == "" {
		return "", fmt.Errorf("post answered %s without a turn: %+v", resp.Status, out)
	}
	return out.TurnID, nil
}

// report adds the p50 and p95 of samples, in milliseconds.
func report(b *testing.B, name string, samples []time.Duration) {
	if len(samples) == 0 {
		return
	}
	slices.Sort(samples)
	at := func(q float64) float64 {
		return float64(samples[min(len(samples)-1, int(q*float64(len(samples))))].Milliseconds())
	}
	b.ReportMetric(at(0.50), name+"-p50-ms")
	b.ReportMetric(at(0.95), name+"-p95-ms")
}
