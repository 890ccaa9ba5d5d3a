package pipeline_test

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/omega-gateway/omega/domain/events"
	heartbeatdom "github.com/omega-gateway/omega/domain/heartbeat"
	selfhealdom "github.com/omega-gateway/omega/domain/selfheal"
	"github.com/omega-gateway/omega/domain/sender"
	"github.com/omega-gateway/omega/domain/turn"
	"github.com/omega-gateway/omega/eventstore/sqlite"
	"github.com/omega-gateway/omega/handlers/apply"
	"github.com/omega-gateway/omega/handlers/duework"
	"github.com/omega-gateway/omega/handlers/effects"
	"github.com/omega-gateway/omega/handlers/heartbeat"
	"github.com/omega-gateway/omega/handlers/selfheal"
	"github.com/omega-gateway/omega/handlers/senders"
	"github.com/omega-gateway/omega/handlers/slash"
	"github.com/omega-gateway/omega/projections"
	"github.com/omega-gateway/omega/projections/engine"
	"github.com/omega-gateway/omega/projections/readmodel"
	"github.com/omega-gateway/omega/projections/tasks"
)

type markerRig struct {
	store  *sqlite.Store
	engine *engine.Engine
	hook   *apply.Markers
	cmds   *slash.Commands
}

func newMarkerRig(t *testing.T) *markerRig {
	t.Helper()
	ctx := context.Background()
	s, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "omega.db"), sqlite.Options{Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	reg := events.NewRegistry()
	engine := engine.New(s.DB(), s, readmodel.SQLite, reg, quiet, tasks.ReadModel{}, projections.Turns{}, projections.Summaries{})
	if err := engine.Setup(ctx); err != nil {
		t.Fatal(err)
	}
	fx := effects.MustNew(s, reg, queries(t, s.DB(), readmodel.SQLite))
	return &markerRig{store: s, engine: engine,
		hook: &apply.Markers{Recorder: fx, Profiles: senders.MustNew(s, reg), Location: time.UTC, Logger: quiet},
		cmds: &slash.Commands{Recorder: fx, Location: time.UTC, Started: time.Now()}}
}

func markerTurn(id, text string) *turn.Turn {
	return &turn.Turn{ID: id, Received: &turn.MessageReceived{Channel: "http", SenderID: "ana", ChatID: "ana", Text: text},
		Context: &turn.ContextBuilt{ConversationID: "conv-" + id}}
}

func (r *markerRig) types(t *testing.T, stream string) []string {
	t.Helper()
	evs, err := r.store.Load(context.Background(), stream, 1)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range evs {
		out = append(out, e.Type)
	}
	return out
}

func TestMarkersApplyAsEvents(t *testing.T) {
	tests := []struct {
		reply, stream, event, effect string
	}{
		{"SCHEDULE: Call Juan | 2030-06-02T17:00:00 | once", "", "TaskScheduled", "reminder"},
		{"SCHEDULE_ACTION: Check prices | 2030-06-02T08:00:00 | daily", "", "TaskScheduled", "action"},
		{"LANG_SWITCH: Spanish", "sender-http-ana", "LanguageSwitched", "language Spanish"},
		{"PERSONALITY: terse", "sender-http-ana", "PersonalitySet", "personality set"},
		{"PURGE_FACTS", "sender-http-ana", "FactsPurged", "facts purged"},
		{"PROJECT_ACTIVATE: garden", "sender-http-ana", "ProjectActivated", "project garden active"},
		{"HEARTBEAT_ADD: check email", "heartbeat-global", "HeartbeatItemAdded", "checklist global"},
		{"HEARTBEAT_INTERVAL: 45", "heartbeat-global", "HeartbeatIntervalSet", "checklist global"},
		{"HEARTBEAT_SUPPRESS_SECTION: weather", "heartbeat-global", "HeartbeatSectionSuppressed", "checklist global"},
		{"LIMITATION: No browser | cannot browse | add one", "limitations", "LimitationReported", "limitation No browser"},
		{"SELF_HEAL: disk full | df -h", "selfheal", "SelfHealStarted", "self-heal"},
		{"BUG_REPORT: crash on start", "bugreports", "BugReported", "bug reported"},
		{"SKILL_IMPROVE: git | rebase first", "skill-git", "SkillLessonRecorded", "skill lesson for git"},
		{"ACTION_OUTCOME: sent the email", "learning-http-ana", "ActionOutcomeRecorded", "outcome recorded"},
		{"REWARD: +1 | email | short is better", "learning-http-ana", "RewardRecorded", "reward +1"},
		{"LESSON: email | keep it short", "learning-http-ana", "LessonLearned", "lesson learned"},
		{"FOO_BAR: nonsense", "", "", "rejected"},
	}
	for _, tt := range tests {
		t.Run(strings.Fields(tt.reply)[0], func(t *testing.T) {
			r := newMarkerRig(t)
			ctx := context.Background()
			tn := markerTurn("t1", "hi")
			for run := 0; run < 2; run++ { // a re-run after a crash records nothing twice
				out, err := r.hook.Process(ctx, tn, "Okay. "+tt.reply, 0)
				if err != nil {
					t.Fatal(err)
				}
				if strings.Contains(out.Text, strings.TrimSuffix(strings.Fields(tt.reply)[0], ":")) {
					t.Fatalf("marker left in %q", out.Text)
				}
				applied := out.Events[0].(turn.MarkersApplied)
				if len(applied.Markers) != 1 || !strings.Contains(applied.Markers[0].Effect, tt.effect) {
					t.Fatalf("applied = %+v", applied)
				}
				stream := tt.stream
				if stream == "" && tt.event != "" {
					stream = applied.Markers[0].Stream
				}
				if tt.event != "" {
					if got := r.types(t, stream); len(got) != 1 || got[0] != tt.event {
						t.Fatalf("run %d: %s holds %v, want one %s", run, stream, got, tt.event)
					}
				}
			}
		})
	}
}

func TestForgetClosesConversation(t *testing.T) {
	r := newMarkerRig(t)
	out, err := r.hook.Process(context.Background(), markerTurn("t1", "hi"), "Bye. FORGET_CONVERSATION", 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Events) != 2 || out.Events[1].(turn.ConversationClosed).ConversationID != "conv-t1" || out.Text != "Bye." {
		t.Fatalf("out = %+v", out)
	}
}

func TestCommandsAnswer(t *testing.T) {
	r := newMarkerRig(t)
	ctx := context.Background()
	if _, err := r.hook.Process(ctx, markerTurn("t0", "hi"), "SCHEDULE: Call Juan | 2030-06-02T17:00:00 | once", 0); err != nil {
		t.Fatal(err)
	}
	if err := r.engine.CatchUp(ctx); err != nil {
		t.Fatal(err)
	}
	tests := []struct{ text, command, contains string }{
		{"/help", "help", "/tasks"},
		{"/tasks", "tasks", "Call Juan"},
		{"/uptime", "uptime", "Up for"},
		{"/status", "status", "Pending tasks: 1"},
		{"/facts", "facts", "I don't know any facts"},
		{"/memory", "memory", "Conversations: 0"},
		{"/whatsapp", "whatsapp", "not enabled"},
		{"/cancel", "cancel", "Usage"},
		{"/cancel zzz", "cancel", "No pending task"},
		{"/language", "language", "Current language"},
		{"/language klingon", "language", "I don't speak klingon"},
		{"/personality pirate", "personality", "pirate"},
		{"/purge", "purge", "deleted"},
		{"/projects", "projects", "Nothing"},
		{"/project nowhere", "project", "no project called nowhere"},
		{"/project off", "project", "deactivated"},
		{"/heartbeat", "heartbeat", "Nothing"},
		{"/learning", "learning", "Nothing"},
		{"/skills", "skills", "Nothing"},
		{"/forget", "forget", "Conversation cleared"},
		{"/bogus", "unknown", "/bogus"},
		{"/language@omega_bot Spanish", "language", "Spanish"},
	}
	r.cmds.BotName = func() string { return "omega_bot" }
	for i, tt := range tests {
		tn := markerTurn("c"+string(rune('a'+i)), tt.text)
		if !r.cmds.IsCommand(tt.text) {
			t.Fatalf("%q is not a command", tt.text)
		}
		ans, err := r.cmds.Answer(ctx, tn, sender.SenderProfile{})
		if err != nil {
			t.Fatalf("%s: %v", tt.text, err)
		}
		if ans.Command != tt.command || !strings.Contains(ans.Reply, tt.contains) {
			t.Errorf("%s = %q %q, want %s containing %q", tt.text, ans.Command, ans.Reply, tt.command, tt.contains)
		}
	}
	if got := r.types(t, "sender-http-ana"); strings.Join(got, ",") != "PersonalitySet,FactsPurged,LanguageSwitched" {
		t.Errorf("sender events = %v", got)
	}
}

// clockItems records what is put on the due-work clock.
type clockItems struct{ items []duework.Item }

func (c *clockItems) Set(it duework.Item) { c.items = append(c.items, it) }

// The marker applier tells its followers what a reply's markers did: a
// SELF_HEAL marker puts the self-heal effort on the clock, a
// HEARTBEAT_INTERVAL marker the heartbeat's global scope; other markers
// and marker-free replies set nothing.
func TestMarkerFollowersSetTheClock(t *testing.T) {
	tests := []struct {
		reply string
		want  []string // kind/id of each item set
	}{
		{"All good.", nil},
		{"LESSON: email | keep it short", nil},
		{"SELF_HEAL: disk full | df -h", []string{selfheal.Kind + "/" + selfhealdom.SelfHealStream}},
		{"HEARTBEAT_INTERVAL: 45", []string{heartbeat.Kind + "/" + heartbeatdom.GlobalHeartbeat}},
		{"SELF_HEAL: disk full | df -h\nHEARTBEAT_INTERVAL: 45", []string{
			heartbeat.Kind + "/" + heartbeatdom.GlobalHeartbeat, selfheal.Kind + "/" + selfhealdom.SelfHealStream}},
	}
	for _, tt := range tests {
		t.Run(tt.reply, func(t *testing.T) {
			r := newMarkerRig(t)
			c := &clockItems{}
			r.hook.Followers = []apply.Follower{selfheal.Kicks(c), heartbeat.Restarts(c)}
			if _, err := r.hook.Process(context.Background(), markerTurn("t1", "hi"), "Okay.\n"+tt.reply, 0); err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, it := range c.items {
				got = append(got, it.Kind+"/"+it.ID)
			}
			slices.Sort(got)
			if !slices.Equal(got, tt.want) {
				t.Fatalf("clock items %q, want %q", got, tt.want)
			}
		})
	}
}
