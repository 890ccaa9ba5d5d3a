package app_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/omega-gateway/omega/app"
	"github.com/omega-gateway/omega/app/config"
	"github.com/omega-gateway/omega/cmd/rerun"
	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/domain/promptctx"
	"github.com/omega-gateway/omega/domain/turn"
	"github.com/omega-gateway/omega/eventstore"
	"github.com/omega-gateway/omega/prompts"
	"github.com/omega-gateway/omega/providers"
)

// echoProvider answers at once with a reply of ordinary length and keeps
// no session: every turn gives the whole context (system prompt and
// history), the costliest one to record.
type echoProvider struct{}

func (echoProvider) Name() string { return "echo" }
func (echoProvider) Complete(_ context.Context, req providers.Request) (providers.Response, error) {
	return providers.Response{Text: "You said «" + req.Prompt + "». Noted, and here is a sentence or two more, as a reply usually has.", Model: req.Model}, nil
}

// maxStoredPerTurn is the target: what an ordinary turn stores.
const maxStoredPerTurn = 3 * 1024

// Stored bytes of the events after position after: data, metadata,
// stream id and type of each, prompt texts included.
func storedBytes(t testing.TB, s eventstore.Store, after int64) (total, head int64) {
	t.Helper()
	total, _, head = storedBytesOf(t, s, after, "ContextBuilt")
	return total, head
}

// storedBytesOf is storedBytes, with the data bytes of events of type typ.
func storedBytesOf(t testing.TB, s eventstore.Store, after int64, typ string) (total, ofType, head int64) {
	t.Helper()
	head = after
	for {
		evs, err := s.ReadAll(context.Background(), head, 1000)
		if err != nil {
			t.Fatal(err)
		}
		if len(evs) == 0 {
			return total, ofType, head
		}
		for _, e := range evs {
			md, err := json.Marshal(e.Metadata)
			if err != nil {
				t.Fatal(err)
			}
			total += int64(len(e.Data) + len(md) + len(e.StreamID) + len(e.Type))
			if e.Type == typ {
				ofType += int64(len(e.Data))
			}
		}
		head = evs[len(evs)-1].Position
	}
}

// diskBytes is the size of the node's database: on SQLite its pages, on
// PostgreSQL its schema's tables with their indexes and TOAST.
func diskBytes(t testing.TB, n *node) int64 {
	t.Helper()
	q := `SELECT page_count * page_size FROM pragma_page_count(), pragma_page_size()`
	if n.rt.Store.Backend() == "postgres" {
		q = `SELECT sum(pg_total_relation_size(c.oid))::bigint FROM pg_class c JOIN pg_namespace s ON s.oid = c.relnamespace
			WHERE s.nspname = current_schema() AND c.relkind = 'r'`
	}
	var size int64
	if err := n.rt.DBForTests().QueryRow(q).Scan(&size); err != nil {
		t.Fatal(err)
	}
	return size
}

// sendWorkload greets senders and then sends each of them perSender
// messages (senders at once, each waiting for its reply), returning the
// turn ids per sender in order and the log position before the messages.
func sendWorkload(t *testing.T, n *node, senders, perSender int) (map[string][]string, int64) {
	t.Helper()
	var wg sync.WaitGroup
	for s := range senders {
		wg.Go(func() { say(t, n, fmt.Sprintf("peer-%d", s), "hello", "30s") })
	}
	wg.Wait()
	_, head := storedBytes(t, n.rt.Store, 0)
	disk := diskBytes(t, n)
	defer func() {
		turns := int64(senders * perSender)
		_, ctxBytes, _ := storedBytesOf(t, n.rt.Store, head, "ContextBuilt")
		t.Logf("%s: database grew %d bytes per turn; ContextBuilt data %d bytes per turn", n.rt.Store.Backend(), (diskBytes(t, n)-disk)/turns, ctxBytes/turns)
	}()
	var mu sync.Mutex
	turns := map[string][]string{}
	for s := range senders {
		wg.Go(func() {
			sender := fmt.Sprintf("peer-%d", s)
			for i := range perSender {
				out := say(t, n, sender, fmt.Sprintf("message %d from %s: ¿qué tal? 你好 — how is it going?", i, sender), "30s")
				if out.Status != "ok" {
					t.Errorf("%s message %d: %+v", sender, i, out)
					return
				}
				mu.Lock()
				turns[sender] = append(turns[sender], out.TurnID)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	return turns, head
}

// fullContextOf returns a turn's ContextBuilt event and its texts in full.
func fullContextOf(t *testing.T, n *node, tn string) (domain.Event, turn.ContextBuilt) {
	t.Helper()
	for _, e := range turnEvents(t, n, tn) {
		if e.Type != (turn.ContextBuilt{}).EventType() {
			continue
		}
		p, err := n.rt.Registry.Decode(e)
		if err != nil {
			t.Fatal(err)
		}
		full, err := n.rt.PromptTexts.Resolve(context.Background(), tn, p.(turn.ContextBuilt))
		if err != nil {
			t.Fatal(err)
		}
		return e, full
	}
	t.Fatalf("turn %s has no context", tn)
	return domain.Event{}, turn.ContextBuilt{}
}

// The prompt is recorded by reference: 100 turns (5 senders x 20
// messages) store at most 3 KB each, the prompt is reconstructed in full
// (system prompt, history), a turn re-runs identical, and a context
// recorded in full by the old schema still decodes and re-runs.
func TestPromptRecordedByReference(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			claude, _ := fakeClaude(t)
			vars := baseVars(t, b, claude)
			vars["OMEGA_TIMEZONE"] = "UTC"
			n := startNodeWith(t, vars, app.RuntimeOptions{Provider: echoProvider{}})
			turns, head := sendWorkload(t, n, 5, 20)
			total, _ := storedBytes(t, n.rt.Store, head)
			perTurn := total / 100
			t.Logf("%s: %d bytes stored per turn over 100 turns", b.name, perTurn)
			if perTurn > maxStoredPerTurn {
				t.Errorf("a turn stores %d bytes, more than %d", perTurn, maxStoredPerTurn)
			}

			// The last turn's prompt is whole: the system prompt and the
			// twenty messages before it, word for word.
			list := turns["peer-0"]
			last := list[len(list)-1]
			ev, full := fullContextOf(t, n, last)
			// The identity as resolved for this process (its channels, its tools).
			identity := strings.TrimSpace(prompts.Defaults().For(prompts.ParseCapabilities(full.Capabilities)).Section(promptctx.Identity))
			if strings.Contains(string(ev.Data), "message 18") || strings.Contains(string(ev.Data), identity) {
				t.Errorf("the context copies the history or the prompt files: %s", ev.Data)
			}
			if identity == "" || !strings.Contains(full.System, identity) || !strings.HasSuffix(full.System, "IMPORTANT: Always respond in English.") {
				t.Errorf("system prompt not reconstructed:\n%s", full.System)
			}
			if len(full.History) != 20 || full.History[18].Text != "message 18 from peer-0: ¿qué tal? 你好 — how is it going?" ||
				!strings.HasPrefix(full.History[19].Text, "You said «message 18 from peer-0") {
				t.Errorf("history not reconstructed: %+v", full.History)
			}
			if full.Prompt != full.Message || !strings.Contains(full.Message, "message 19 from peer-0") {
				t.Errorf("prompt %q, message %q", full.Prompt, full.Message)
			}

			cfg, err := config.LoadFrom(vars)
			if err != nil {
				t.Fatal(err)
			}
			assertRerunIdentical(t, n, cfg, last)

			// An old turn: its context recorded in full by schema 1.
			old := turns["peer-1"][len(turns["peer-1"])-1]
			ev, full = fullContextOf(t, n, old)
			writeOldContext(t, n, ev, full)
			p, err := n.rt.Registry.Decode(turnEventOfType(t, n, old, ev.Type))
			if err != nil {
				t.Fatal(err)
			}
			c := p.(turn.ContextBuilt)
			if c.ByReferenceRecorded() && len(c.SystemParts) != 1 {
				t.Fatalf("old context upcast to %+v", c)
			}
			again, err := n.rt.PromptTexts.Resolve(context.Background(), old, c)
			if err != nil {
				t.Fatal(err)
			}
			if !equalTexts(again, full) {
				t.Errorf("old context decodes as\n%+v\nwant\n%+v", again.Texts(), full.Texts())
			}
			assertRerunIdentical(t, n, cfg, old)
		})
	}
}

func assertRerunIdentical(t *testing.T, n *node, cfg config.Config, tn string) {
	t.Helper()
	res, err := rerun.Run(context.Background(), n.rt.Store, n.rt.Registry, cfg, tn, rerun.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Identical {
		t.Errorf("turn %s re-ran differently:\n%s", tn, strings.Join(res.Diff, "\n"))
	}
}

func equalTexts(a, b turn.ContextBuilt) bool {
	x, _ := json.Marshal(a.Texts())
	y, _ := json.Marshal(b.Texts())
	return string(x) == string(y)
}

func turnEventOfType(t *testing.T, n *node, tn, typ string) domain.Event {
	t.Helper()
	for _, e := range turnEvents(t, n, tn) {
		if e.Type == typ {
			return e
		}
	}
	t.Fatalf("turn %s has no %s", tn, typ)
	return domain.Event{}
}

// writeOldContext rewrites a recorded context as schema 1 recorded it
// before the prompt was kept by reference: every text in full.
func writeOldContext(t *testing.T, n *node, e domain.Event, full turn.ContextBuilt) {
	t.Helper()
	data, err := json.Marshal(full.Texts())
	if err != nil {
		t.Fatal(err)
	}
	md := e.Metadata
	md.SchemaVersion = 1
	mdb, err := json.Marshal(md)
	if err != nil {
		t.Fatal(err)
	}
	res, err := n.rt.DBForTests().Exec(`UPDATE events SET data = $1, metadata = $2 WHERE event_id = $3`, string(data), string(mdb), e.ID.String())
	if err != nil {
		t.Fatal(err)
	}
	if k, _ := res.RowsAffected(); k != 1 {
		t.Fatalf("rewrote %d events", k)
	}
	// The store keeps the stream as it wrote it; this rewrite went behind
	// its back.
	n.rt.Store.(interface{ DropCached(string) }).DropCached(e.StreamID)
}
