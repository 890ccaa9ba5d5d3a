package markers

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// checkRelease feeds reply to a Release in the given pieces and checks
// what a person could see: every text shown is a prefix of the final text
// (so nothing held back that turned out to be a marker is ever shown),
// carries no protocol text, never shrinks, and the final text is Parse's.
func checkRelease(t *testing.T, reply string, pieces []string) {
	t.Helper()
	want := Parse(reply).Text
	var r Release
	shown := ""
	for i, p := range pieces {
		got, grew := r.Write(p)
		if !strings.HasPrefix(want, got) {
			t.Fatalf("after piece %d of %q: shown %q is not a prefix of the final %q", i, pieces, got, want)
		}
		if l := leaks(got); len(l) > 0 {
			t.Fatalf("after piece %d of %q: shown %q leaks %v", i, pieces, got, l)
		}
		if !strings.HasPrefix(got, shown) || grew != (got != shown) {
			t.Fatalf("after piece %d of %q: shown %q after %q (grew=%v)", i, pieces, got, shown, grew)
		}
		shown = got
	}
	if got := r.Text(); got != want {
		t.Fatalf("final text of %q = %q, Parse says %q", pieces, got, want)
	}
}

// cut splits s at random byte offsets, so pieces may end mid-word,
// mid-marker or mid-rune.
func cut(s string, rng *rand.Rand) []string {
	var pieces []string
	for len(s) > 0 {
		n := 1 + rng.IntN(min(len(s), 12))
		pieces = append(pieces, s[:n])
		s = s[n:]
	}
	return pieces
}

// fragments are what random replies are made of: prose, markdown, every
// marker's example, markers wrapped and mid-sentence, and near misses.
var fragments = func() []string {
	f := []string{
		"Sure! ", "Here you go.", "I'll remind you", " tomorrow", "\n", "\n\n", "- ", "1. ", "> ", "**", "`",
		"```\n", "SILENT", " SILENT", "Silent night", "NOTE: keep", "DATABASE_URL: x", "FOO_BAR: y",
		"HEARTBEAT_OKAY", "SCHEDULED", "schedule: lower", "café ☕ ", "日本語", "\r\n", "  ", ":", "_", "|",
		"**HEARTBEAT_OK**", "__SCHEDULE__: x | 2026-01-01T00:00:00Z | once", "CANCEL_TASK abc",
	}
	for _, s := range specs {
		f = append(f, s.Example, " "+s.Example+" ", "*"+s.Example+"*")
	}
	return f
}()

// compose builds a random reply from fragments.
func compose(rng *rand.Rand) string {
	var b strings.Builder
	for n := rng.IntN(16); n >= 0; n-- {
		b.WriteString(fragments[rng.IntN(len(fragments))])
	}
	return b.String()
}

func TestReleaseExamples(t *testing.T) {
	cases := []struct {
		name   string
		pieces []string
	}{
		{"plain prose streams word by word", []string{"Hello ", "there, ", "how are ", "you?"}},
		{"inline marker is held", []string{"Sure! SCHED", "ULE: Call Juan | 2026-02-24T17:00:00Z", " | once\nDone."}},
		{"bare marker wrapped", []string{"Ok **HEART", "BEAT_OK** ", "bye"}},
		{"silent line", []string{"SIL", "ENT\n", "after"}},
		{"bullet of a marker", []string{"- ", "HEARTBEAT_ADD: water\n- real item"}},
		{"fence turns the net off", []string{"```\nDATABASE", "_URL: x\n```\nok"}},
		{"split rune", []string{"caf\xc3", "\xa9 ok"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			checkRelease(t, strings.Join(c.pieces, ""), c.pieces)
		})
	}
}

func TestReleaseShowsProseBeforeTheLineEnds(t *testing.T) {
	var r Release
	got, _ := r.Write("The weather today is ")
	if got != "The weather today is" {
		t.Fatalf("shown %q, want the decided words", got)
	}
	got, _ = r.Write("sunny. SCHEDULE: x")
	if got != "The weather today is sunny." {
		t.Fatalf("shown %q, want the text before the marker", got)
	}
}

func FuzzRelease(f *testing.F) {
	rng := rand.New(rand.NewPCG(1, 2))
	for range 200 {
		f.Add(compose(rng), rng.Uint64())
	}
	f.Fuzz(func(t *testing.T, reply string, seed uint64) {
		checkRelease(t, reply, cut(reply, rand.New(rand.NewPCG(seed, seed>>7))))
	})
}

// FuzzReleaseComposed explores replies built from marker fragments, which
// random bytes rarely hit.
func FuzzReleaseComposed(f *testing.F) {
	for i := range uint64(50) {
		f.Add(i)
	}
	f.Fuzz(func(t *testing.T, seed uint64) {
		rng := rand.New(rand.NewPCG(seed, 99))
		reply := compose(rng)
		checkRelease(t, reply, cut(reply, rng))
	})
}
