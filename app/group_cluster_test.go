package app_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/omega-gateway/omega/app"
	"github.com/omega-gateway/omega/channels"
	"github.com/omega-gateway/omega/domain/turn"
	"github.com/omega-gateway/omega/handlers/intake"
	"github.com/omega-gateway/omega/handlers/pipeline"
)

// Two omega processes on one PostgreSQL database: a member's group message
// reaches one, another member's message in the same group the other while
// the first turn's provider call is held. The group's lease keeps the
// second turn from starting until the first returned, the second is
// acknowledged in the group, and it resumes the session the first made.
func TestGroupTurnsRunOneAtATimeAcrossProcesses(t *testing.T) {
	claude := heldClaude(t)
	claude.set(t, "hold", "")
	vars := baseVars(t, backends()[1], claude.bin)
	vars2 := map[string]string{}
	for k, v := range vars {
		vars2[k] = v
	}
	vars2["OMEGA_DATA_DIR"] = t.TempDir()
	auth := &pipeline.Auth{Allowed: map[string][]string{"testchat": {"m1", "m2"}}}
	ch1, ch2 := &fakeChannel{name: "testchat"}, &fakeChannel{name: "testchat"}
	n1 := startNodeWith(t, vars, app.RuntimeOptions{Channels: []channels.Channel{ch1}, Auth: auth})
	n2 := startNodeWith(t, vars2, app.RuntimeOptions{Channels: []channels.Channel{ch2}, Auth: auth})

	say := func(n *node, from, text, platformID string) string {
		t.Helper()
		in := channels.Incoming{Channel: "testchat", SenderID: from, SenderName: from, ChatID: "g1", IsGroup: true, Mentioned: true, Text: text, PlatformID: platformID}
		if err := n.rt.Deliver(context.Background(), in); err != nil {
			t.Fatal(err)
		}
		return intake.TurnID(in)
	}
	first := say(n1, "m1", "HOLDME plan CLUSTERMARK-A", "g1:1")
	waitFor(t, "the first member's call to start", func() bool {
		return logged(claude.orderLog(t), "start", "CLUSTERMARK-A") >= 0
	})
	second := say(n2, "m2", "and me CLUSTERMARK-B", "g1:2")
	waitFor(t, "the second member's message acknowledged or run", func() bool {
		return countType(turnEvents(t, n1, second), "AckSent") == 1 || logged(claude.orderLog(t), "start", "CLUSTERMARK-B") >= 0
	})
	if logged(claude.orderLog(t), "start", "CLUSTERMARK-B") >= 0 {
		t.Fatalf("the second member's call started while the group's turn ran: %q", claude.orderLog(t))
	}
	acked := func(ch *fakeChannel) bool {
		return slices.ContainsFunc(ch.texts("g1"), func(s string) bool { return strings.Contains(s, "I'll get to this next") })
	}
	waitFor(t, "the busy acknowledgement in the group", func() bool { return acked(ch1) || acked(ch2) })

	if err := os.Remove(filepath.Join(claude.dir, "hold")); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "both group turns", func() bool {
		return countType(turnEvents(t, n1, first), completed) == 1 && countType(turnEvents(t, n1, second), completed) == 1
	})
	lines := claude.orderLog(t)
	if end, start := logged(lines, "end", "CLUSTERMARK-A"), logged(lines, "start", "CLUSTERMARK-B"); start < end {
		t.Fatalf("the second member's call started before the first one's returned: %q", lines)
	}
	session := decodeLast[turn.ProviderReplied](t, turnEvents(t, n1, first), "ProviderReplied").SessionID
	if called := decodeLast[turn.ProviderCalled](t, turnEvents(t, n1, second), "ProviderCalled"); session == "" || called.SessionID != session {
		t.Fatalf("the second member's call resumed %q, want the first call's session %q", called.SessionID, session)
	}
}
