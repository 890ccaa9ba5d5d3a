package turn

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"github.com/omega-gateway/omega/domain"
)

// memTexts stores texts as a prompt store would and serves them back.
type memTexts map[string]string

func (m memTexts) lookup(hash string) (string, error) {
	t, ok := m[hash]
	if !ok {
		return "", fmt.Errorf("no text %s", hash)
	}
	return t, nil
}

// turnTexts are recorded messages: turn -> role -> text.
type turnTexts map[string]map[string]string

func (t turnTexts) history(h HistoryMessage) (string, error) {
	text, ok := t[h.Turn][h.Role]
	if !ok {
		return "", errors.New("no such message")
	}
	return text, nil
}

func pieces(stable bool, texts ...string) []TextPiece {
	out := make([]TextPiece, len(texts))
	for i, t := range texts {
		out[i] = TextPiece{Text: t, Stable: stable && t != "\n\n"}
	}
	return out
}

func concat(ps []TextPiece) string {
	var b strings.Builder
	for _, p := range ps {
		b.WriteString(p.Text)
	}
	return b.String()
}

// Building the references and resolving them gives back the exact
// context, whatever the texts hold.
func TestContextByReferenceRoundTrip(t *testing.T) {
	long := strings.Repeat("Identity: you are omega, helpful and brief. ", 10)
	unicode := strings.Repeat("Sé breve — 簡潔に — 🙂 ", 12)
	recorded := turnTexts{
		"t1":                                   {"user": "hola ¿qué tal?", "assistant": "¡Bien! 🙂"},
		"t2":                                   {"user": "", "assistant": "an empty question gets an answer"},
		"t3":                                   {"user": "only asked"},
		"0b9c2f4e-1a2b-4c3d-8e9f-a0b1c2d3e4f5": {"user": "a uuid turn", "assistant": "its reply"},
		"7F1C2F4E-1A2B-4C3D-8E9F-A0B1C2D3E4F5": {"user": "an upper-case id is kept as written"},
	}
	cases := []struct {
		name     string
		system   []TextPiece
		prompt   []TextPiece // nil: the prompt is the message
		message  string
		received string
		history  []HistoryMessage
	}{
		{name: "stable sections and short blocks", system: append(pieces(true, long, "\n\n", unicode), pieces(false, "\n\n", "Current time: now", "\n\n", "Respond in English.")...),
			message: "hi", received: "hi"},
		{name: "empty sections are left out", system: pieces(false, "", "abc", "", "\n\n", ""), message: "x", received: "y"},
		{name: "empty system and message", system: nil, message: "", received: ""},
		{name: "large changing block stored on its own", system: append(pieces(true, long), append(pieces(false, "\n\n", strings.Repeat("- task ✓\n", 40)), pieces(true, "\n\n", unicode)...)...),
			message: "¿y mañana?", received: "¿y mañana?"},
		{name: "continuation ending in the message", prompt: pieces(false, "[Context update]\n", "Current time: now", "\n[End of context update]\n\n", "dime 你好"),
			system: pieces(true, long), message: "dime 你好", received: "dime 你好"},
		{name: "continuation with a large gated section", prompt: append(append(pieces(false, "[Context update]\n"), pieces(true, unicode)...), pieces(false, "\n[End of context update]\n\n", "msg")...),
			message: "msg", received: "other"},
		{name: "empty prompt that is not the message", prompt: pieces(false, ""), message: "m", received: "m"},
		{name: "history as turns", system: pieces(true, long), message: "next", received: "next",
			history: []HistoryMessage{{Role: "user", Turn: "t1"}, {Role: "assistant", Turn: "t1"}, {Role: "assistant", Turn: "t2"},
				{Role: "user", Turn: "t2"}, {Role: "user", Turn: "t3"}}},
		{name: "history of uuid turns", message: "next", received: "next",
			history: []HistoryMessage{{Role: "user", Turn: "0b9c2f4e-1a2b-4c3d-8e9f-a0b1c2d3e4f5"}, {Role: "assistant", Turn: "0b9c2f4e-1a2b-4c3d-8e9f-a0b1c2d3e4f5"},
				{Role: "user", Turn: "7F1C2F4E-1A2B-4C3D-8E9F-A0B1C2D3E4F5"}, {Role: "assistant", Turn: "t1"}}},
		{name: "history without turns stays inline", message: "q", received: "q",
			history: []HistoryMessage{{Role: "user", Text: "inline ✓"}, {Role: "assistant", Turn: "t1"}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := ContextBuilt{ConversationID: "c1", Model: "m", SectionsUsed: []string{"Identity"}, Message: tc.message,
				System: concat(tc.system), SystemPieces: tc.system, Prompt: tc.message}
			if tc.prompt != nil {
				c.Prompt, c.PromptPieces, c.Continuation = concat(tc.prompt), tc.prompt, true
			}
			for _, h := range tc.history {
				if h.Text == "" {
					h.Text = recorded[h.Turn][h.Role]
				}
				c.History = append(c.History, h)
			}
			ref, texts := c.ByReference(tc.received)
			data, err := json.Marshal(ref)
			if err != nil {
				t.Fatal(err)
			}
			for _, stored := range texts {
				if strings.Contains(string(data), jsonText(stored)) {
					t.Errorf("a stored text is copied into the context: %s", data)
				}
			}
			var back ContextBuilt
			if err := json.Unmarshal(data, &back); err != nil {
				t.Fatal(err)
			}
			got, err := back.Resolve(Resolver{Text: memTexts(texts).lookup, History: recorded.history,
				Received: func() (string, error) { return tc.received, nil }})
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got.Texts(), c.Texts()) {
				t.Fatalf("resolved\n%#v\nwant\n%#v\nrecorded %s", got.Texts(), c.Texts(), data)
			}
		})
	}
}

// jsonText is how a text appears inside JSON.
func jsonText(s string) string {
	b, _ := json.Marshal(s)
	return strings.Trim(string(b), `"`)
}

// splitPieces splits pieces as a context's prompt made of them is split.
func splitPieces(pieces []TextPiece, message string, stored map[string]string) []TextPart {
	var b strings.Builder
	for _, p := range pieces {
		b.WriteString(p.Text)
	}
	return splitText(b.String(), pieces, message, stored)
}

// The prompt files are one stored text: a context records one hash for
// them, not their text, and the same files give the same hash.
func TestStablePiecesAreOneStoredText(t *testing.T) {
	files := pieces(true, strings.Repeat("a", 500), "\n\n", strings.Repeat("b", 10), "\n\n", strings.Repeat("c", 300))
	sys := append(files, pieces(false, "\n\n", "Current time: 10:00")...)
	stored := map[string]string{}
	parts := splitPieces(sys, "", stored)
	if len(parts) != 2 || parts[0].Hash == "" || parts[1].Text != "\n\nCurrent time: 10:00" || len(stored) != 1 {
		t.Fatalf("parts %+v, stored %d", parts, len(stored))
	}
	later := append(files, pieces(false, "\n\n", "Current time: 10:01")...)
	if again := splitPieces(later, "", map[string]string{}); again[0].Hash != parts[0].Hash {
		t.Fatalf("the same files stored twice: %s, %s", again[0].Hash, parts[0].Hash)
	}
}

// A stored text that does not match its hash is refused, not shown.
func TestResolveRefusesAForeignText(t *testing.T) {
	c := ContextBuilt{SystemParts: []TextPart{{Hash: TextHash("right")}}}
	_, err := c.Resolve(Resolver{Text: func(string) (string, error) { return "wrong", nil }})
	if err == nil {
		t.Fatal("a text that does not match its hash was accepted")
	}
}

// A ContextBuilt recorded in full by schema 1 decodes with its texts.
func TestContextBuiltSchema1Upcast(t *testing.T) {
	r := domain.NewRegistry()
	RegisterEvents(r)
	cases := []struct {
		name string
		v1   string
		want ContextBuilt
	}{
		{"full context", `{"conversation_id":"c","language":"English","model":"m","sections_used":["Identity","history"],"system":"You are omega.\n\nRespond in English.","prompt":"hola","message":"hola","history":[{"role":"user","text":"antes"},{"role":"assistant","text":"sí"}],"facts_count":2}`,
			ContextBuilt{ConversationID: "c", Language: "English", Model: "m", SectionsUsed: []string{"Identity", "history"}, System: "You are omega.\n\nRespond in English.",
				Prompt: "hola", Message: "hola", History: []HistoryMessage{{Role: "user", Text: "antes"}, {Role: "assistant", Text: "sí"}}, FactsCount: 2}},
		{"resumed session", `{"conversation_id":"c","language":"Spanish","model":"m","session_id":"s","continuation":true,"sections_used":["time"],"system":"S","prompt":"[Context update]\nnow\n[End of context update]\n\nqué","message":"qué","facts_count":0}`,
			ContextBuilt{ConversationID: "c", Language: "Spanish", Model: "m", SessionID: "s", Continuation: true, SectionsUsed: []string{"time"}, System: "S",
				Prompt: "[Context update]\nnow\n[End of context update]\n\nqué", Message: "qué"}},
		{"empty texts", `{"conversation_id":"c","language":"","model":"","sections_used":null,"system":"","prompt":"","message":"","facts_count":0}`,
			ContextBuilt{ConversationID: "c"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for _, v := range []int{0, 1} { // events before schema versions were stamped, and stamped 1
				p, err := r.Decode(domain.Event{Type: "ContextBuilt", Data: json.RawMessage(tc.v1), Metadata: domain.Metadata{SchemaVersion: v}})
				if err != nil {
					t.Fatal(err)
				}
				got, err := p.(ContextBuilt).Resolve(Resolver{})
				if err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(got.Texts(), tc.want) {
					t.Fatalf("decoded\n%#v\nwant\n%#v", got.Texts(), tc.want)
				}
			}
		})
	}
	if v := r.SchemaVersion("ContextBuilt"); v != 2 {
		t.Fatalf("ContextBuilt is written at schema %d", v)
	}
}

// Pieces are used only when they make up the text exactly; otherwise the
// text is one piece.
func TestOrPieces(t *testing.T) {
	pieces := []TextPiece{{Text: "You are ", Stable: true}, {Text: "omega"}, {Text: ".", Stable: true}}
	tests := []struct {
		text  string
		whole bool
	}{
		{"You are omega.", false},
		{"You are omega", true},
		{"You are omega.!", true},
		{"You are Omega.", true},
		{"", true},
	}
	for _, tc := range tests {
		got := orPieces(pieces, tc.text)
		if whole := len(got) == 1 && got[0].Text == tc.text; whole != tc.whole {
			t.Errorf("orPieces(%q) = %+v; whole text %v, want %v", tc.text, got, whole, tc.whole)
		}
	}
	if got := orPieces(nil, "x"); len(got) != 1 || got[0].Text != "x" {
		t.Errorf("without pieces: %+v", got)
	}
}

// Splitting keeps the pieces' text whatever their mix: inline pieces
// merged, stable runs glued, long pieces stored, the message named.
func TestSplitTextJoinsBackToThePieces(t *testing.T) {
	long := strings.Repeat("L", MinStoredText)
	cases := []struct {
		name   string
		pieces []TextPiece
		want   []string // each part: "h" stored, "m" the message, else its inline text
	}{
		{"inline merged", append(pieces(false, "a", "b"), pieces(false, "c")...), []string{"abc"}},
		{"stable run glued", pieces(true, "s1", "\n\n", "s2"), []string{"h"}},
		{"stable, inline, stable", append(append(pieces(true, "s1"), pieces(false, "x", "y")...), pieces(true, "s2")...), []string{"h", "xy", "h"}},
		{"long piece stored", append(pieces(false, "a"), pieces(false, long, "b")...), []string{"a", "h", "b"}},
		{"empty pieces skipped", append(pieces(false, "a", "", "b"), pieces(true, "", "s")...), []string{"ab", "h"}},
		{"message last", append(pieces(true, "s"), pieces(false, "\n", "hello")...), []string{"h", "\n", "m"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var whole strings.Builder
			for _, p := range c.pieces {
				whole.WriteString(p.Text)
			}
			stored := memTexts{}
			parts := splitPieces(c.pieces, "hello", stored)
			var got []string
			for _, p := range parts {
				switch {
				case p.Hash != "":
					got = append(got, "h")
				case p.Message:
					got = append(got, "m")
				default:
					got = append(got, p.Text)
				}
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Fatalf("parts %q, want %q", got, c.want)
			}
			joined, err := JoinText(parts, "hello", stored.lookup)
			if err != nil || joined != whole.String() {
				t.Fatalf("joined %q (%v), want %q", joined, err, whole.String())
			}
		})
	}
}

// A turn's context is split at every turn: its prompt texts are not
// copied to be stored or hashed.
func TestByReferenceDoesNotCopyThePrompt(t *testing.T) {
	sys := append(pieces(true, strings.Repeat("rule. ", 4000), "\n\n", strings.Repeat("file. ", 4000)), pieces(false, "\n\n", "Current time: 10:00")...)
	var whole strings.Builder
	for _, p := range sys {
		whole.WriteString(p.Text)
	}
	c := ContextBuilt{System: whole.String(), SystemPieces: sys, Message: "hi", Prompt: "hi"}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	const runs = 20
	for range runs {
		if _, stored := c.ByReference("hi"); len(stored) != 1 {
			t.Fatalf("stored %d texts, want 1", len(stored))
		}
	}
	runtime.ReadMemStats(&after)
	if per := (after.TotalAlloc - before.TotalAlloc) / runs; per > uint64(len(c.System))/4 {
		t.Fatalf("%d bytes allocated a split of a %d-byte prompt", per, len(c.System))
	}
}
