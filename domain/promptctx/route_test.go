package promptctx

import (
	"bufio"
	"encoding/json"
	"os"
	"testing"
)

// corpusMessage is one line of testdata/route_corpus.jsonl.
type corpusMessage struct {
	Lang  string `json:"lang"`
	Class string `json:"class"` // greeting, question, reminder, multi-step
	Text  string `json:"text"`
}

func loadCorpus(t testing.TB) []corpusMessage {
	t.Helper()
	f, err := os.Open("testdata/route_corpus.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []corpusMessage
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var m corpusMessage
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("corpus line %d: %v", len(out)+1, err)
		}
		out = append(out, m)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestNeedsPlan(t *testing.T) {
	tests := []struct {
		msg    string
		reason string
	}{
		{"hello", ""},
		{"what's the weather tomorrow?", ""},
		{"remind me first thing tomorrow to call Ana", ""},
		{"write Ana a note", ""},
		{"puis-je venir demain ?", ""},
		{"1. buy milk", ""},
		{"todo:\n1. buy milk\n2) call Bob", "list"},
		{"- eggs\n- flour", "list"},
		{"book the table and then tell Ana", "sequence"},
		{"zuerst die Mails, dann den Kalender", "sequence"},
		{"cherche le train, puis réserve", "sequence"},
		{"prepare the quarterly report", "work"},
		{"Research X and compare it with Y", "work"},
		{"compare", ""},
	}
	for _, tt := range tests {
		got := NeedsPlan(tt.msg)
		if got.Reason != tt.reason || got.Classify != (tt.reason != "") {
			t.Errorf("NeedsPlan(%q) = %+v, want reason %q", tt.msg, got, tt.reason)
		}
	}
}

// Every multi-step request of the corpus reaches the classifier, and the
// corpus costs at most 1.1 provider calls per message: the answer, plus
// a classification for each message the pre-filter passes.
func TestRouteCorpus(t *testing.T) {
	corpus := loadCorpus(t)
	if len(corpus) < 200 {
		t.Fatalf("corpus has %d messages, want at least 200", len(corpus))
	}
	langs := map[string]int{}
	passed := 0
	for _, m := range corpus {
		r := NeedsPlan(m.Text)
		if r.Classify {
			passed++
		}
		if m.Class == "multi-step" {
			langs[m.Lang]++
			if !r.Classify {
				t.Errorf("multi-step request (%s) loses its plan: %q", m.Lang, m.Text)
			}
		} else if r.Classify {
			t.Logf("classified although %s (%s, %s): %q", m.Class, m.Lang, r.Reason, m.Text)
		}
	}
	for _, lang := range []string{"en", "es", "de", "fr", "it", "pt"} {
		if langs[lang] < 3 {
			t.Errorf("corpus has %d multi-step requests in %s, want at least 3", langs[lang], lang)
		}
	}
	calls := float64(len(corpus)+passed) / float64(len(corpus))
	t.Logf("%d messages, %d classified: %.3f provider calls per message (2.000 without the pre-filter)", len(corpus), passed, calls)
	if calls > 1.1 {
		t.Errorf("%.3f provider calls per message, want at most 1.1", calls)
	}
}
