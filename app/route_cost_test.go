package app_test

import (
	"bufio"
	"encoding/json"
	"os"
	"testing"

	"github.com/omega-gateway/omega/domain/promptctx"
)

// TestRouteCorpusCost measures, over the routing corpus, the provider
// calls and classification prompt bytes per message with and without the
// pre-filter (the answer's own prompt is the same either way). The
// classification context is left out: it is at most three short lines.
func TestRouteCorpusCost(t *testing.T) {
	f, err := os.Open("../domain/promptctx/testdata/route_corpus.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var n, passed, bytesBefore, bytesAfter int
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var m struct{ Text string }
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatal(err)
		}
		size := len(promptctx.ClassificationPrompt(m.Text, ""))
		n++
		bytesBefore += size
		if promptctx.NeedsPlan(m.Text).Classify {
			passed++
			bytesAfter += size
		}
	}
	if err := sc.Err(); err != nil || n == 0 {
		t.Fatalf("corpus: %d messages, %v", n, err)
	}
	before, after := 2.0, float64(n+passed)/float64(n)
	t.Logf("%d messages: provider calls per message %.3f -> %.3f; classification prompt bytes per message %d -> %d",
		n, before, after, bytesBefore/n, bytesAfter/n)
	if after > 1.1 {
		t.Errorf("%.3f provider calls per message, want at most 1.1", after)
	}
}
