package main

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

// Two `omega serve` processes on one PostgreSQL: the sender page "as of"
// a moment, asked of the process that does not apply the read models
// right after a turn there, shows that turn's conversation. The turns
// read model only says which turns to fold, and the process applying it
// reads the other's events at its lazy pace: without waiting for it the
// page showed the moment before the turn: no conversation, no turn.
func TestSenderPageAsOfNowOnAProcessThatDoesNotApply(t *testing.T) {
	c := newCluster(t)
	first, firstURL := c.start(t)
	second, secondURL := c.start(t)
	other := secondURL
	if waitOneApplier(t, c.db, 10*time.Second, first.cmd.Process.Pid, second.cmd.Process.Pid) == second.cmd.Process.Pid {
		other = firstURL
	}
	for i := range 5 {
		who := fmt.Sprintf("asof%d", i)
		out := postMessage(t, other, who, fmt.Sprintf("hello %d", i), "30s")
		if out["status"] != "ok" {
			t.Fatalf("turn %d: %v", i, out)
		}
		at := time.Now().UTC().Format(time.RFC3339Nano)
		code, page := httpBody(t, other+"/ui/senders/http/"+who+"?at="+url.QueryEscape(at))
		if code != http.StatusOK {
			t.Fatalf("as of %s: %d\n%s", at, code, page)
		}
		// The moment's open conversation, and the turn among the recent ones.
		for _, want := range []string{"Conversation: open", out["turn_id"].(string), fmt.Sprintf("hello %d", i)} {
			if !strings.Contains(page, want) {
				t.Errorf("as of %s, just after turn %d, the page lacks %q\n%s", at, i, want, page)
			}
		}
	}
}
