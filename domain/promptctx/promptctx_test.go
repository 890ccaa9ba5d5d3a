package promptctx

import (
	"slices"
	"strings"
	"testing"
	"time"
	_ "time/tzdata" // Europe/Lisbon must resolve on machines without zoneinfo
)

func TestGate(t *testing.T) {
	tests := []struct {
		msg  string
		want Sections
	}{
		{"hello", Sections{}},
		{"hello, how are you?", Sections{}},
		{"good morning", Sections{}},
		{"remind me tomorrow", Sections{Scheduling: true, Tasks: true, Profile: true}},
		{"Schedule for tomorrow to call Juan at 5pm", Sections{Scheduling: true, Tasks: true, Profile: true}},
		{"recuérdame mañana llamar a Juan", Sections{Scheduling: true, Tasks: true, Profile: true}},
		{"lembre-me amanhã", Sections{Scheduling: true, Tasks: true, Profile: true}},
		{"Erinnere mich morgen", Sections{Scheduling: true, Tasks: true, Profile: true}},
		{"напомни мне завтра", Sections{Scheduling: true, Tasks: true, Profile: true}},
		{"what are my tasks?", Sections{Tasks: true, Profile: true}},
		{"activate the trader project", Sections{Projects: true}},
		{"improve this skill", Sections{Meta: true}},
		{"keep an eye on my disk usage", Sections{Meta: true}},
		{"do you remember what we discussed?", Sections{Recall: true, Profile: true}},
		{"who am I?", Sections{Profile: true}},
		{"how am i doing?", Sections{Outcomes: true}},
		// Word-start matching: keywords inside other words do not fire.
		{"the crowd was subdued", Sections{}},
		{"I fixed the debug output", Sections{}},
	}
	for _, tt := range tests {
		t.Run(tt.msg, func(t *testing.T) {
			if got := Gate(tt.msg); got != tt.want {
				t.Errorf("Gate(%q) = %+v, want %+v", tt.msg, got, tt.want)
			}
		})
	}
}

var prompts = map[string]string{
	Identity:   "IDENTITY-TEXT",
	Soul:       "SOUL-TEXT",
	System:     "SYSTEM-TEXT",
	Scheduling: "SCHEDULING-TEXT SCHEDULE: <description> | <ISO 8601 datetime> | <repeat>",
	Projects:   "PROJECTS-TEXT",
	Meta:       "META-TEXT",
}

func baseInput(msg string) Input {
	lisbon, _ := time.LoadLocation("Europe/Lisbon")
	if lisbon == nil {
		lisbon = time.FixedZone("WET", 0)
	}
	return Input{
		Prompts:        prompts,
		FirstInSession: true,
		Message:        msg,
		SenderName:     "Daniel",
		Language:       "English",
		Now:            time.Date(2026, 2, 23, 14, 30, 0, 0, time.UTC),
		Location:       lisbon,
		Facts:          [][2]string{{"timezone", "Europe/Lisbon"}, {"location", "Portugal"}},
		History:        []Turn{{Role: "user", Text: "hi"}, {Role: "assistant", Text: "hello!"}},
		Lessons:        []string{"[scheduling] User prefers reminders 15 minutes before"},
		Outcomes:       []string{"+1 scheduling: quick reminder"},
		Summaries:      []string{"Talked about the trip to Porto"},
		PendingTasks: []Task{
			{ID: "a1b2c3d4-e5f6", Description: "Daily standup reminder", Due: time.Date(2026, 2, 24, 9, 0, 0, 0, time.UTC), Repeat: "daily"},
			{ID: "e5f6g7h8", Description: "Call dentist", Due: time.Date(2026, 2, 25, 10, 0, 0, 0, time.UTC), Action: true},
		},
	}
}

// "hello" gets the core and the profile (always loaded, as the seed's
// context does), nothing keyword-gated.
func TestBuildHelloGetsCoreAndProfile(t *testing.T) {
	out := Build(baseInput("hello"))
	for _, want := range []string{"IDENTITY-TEXT", "SOUL-TEXT", "SYSTEM-TEXT",
		"User profile:\n- name: Daniel\n- timezone: Europe/Lisbon\n- location: Portugal",
		"Learned behavioral rules:\n- [scheduling] User prefers", "IMPORTANT: Always respond in English.",
		"Current time: Monday 2026-02-23 14:30 WET (Europe/Lisbon, UTC+00:00)"} {
		if !strings.Contains(out.System, want) {
			t.Errorf("System lacks %q:\n%s", want, out.System)
		}
	}
	for _, absent := range []string{"SCHEDULING-TEXT", "PROJECTS-TEXT", "META-TEXT", "User's scheduled tasks",
		"Recent outcomes", "summaries", "Group chat rules"} {
		if strings.Contains(out.System, absent) {
			t.Errorf("System should not contain %q for hello", absent)
		}
	}
	wantSections := []string{Identity, Soul, System, BlockProfile, BlockLessons, BlockTime, BlockLanguage, BlockHistory}
	if !slices.Equal(out.SectionsUsed, wantSections) {
		t.Errorf("SectionsUsed = %v, want %v", out.SectionsUsed, wantSections)
	}
	if out.Continuation != "" || out.ContinuationSections != nil {
		t.Errorf("first message must have no continuation, got %q", out.Continuation)
	}
	if len(out.Messages) != 3 || out.Messages[2].Text != "hello" || out.Messages[2].Role != "user" {
		t.Errorf("Messages = %+v", out.Messages)
	}
}

func TestBuildReminderGetsScheduling(t *testing.T) {
	out := Build(baseInput("remind me tomorrow to call Juan at 5pm"))
	for _, want := range []string{
		"SCHEDULING-TEXT",
		"User profile:\n- name: Daniel\n- timezone: Europe/Lisbon\n- location: Portugal",
		"User's scheduled tasks:\n- [a1b2c3d4] Daily standup reminder (due: 2026-02-24 09:00 WET, daily)\n- [e5f6g7h8] Call dentist [action] (due: 2026-02-25 10:00 WET, once)",
	} {
		if !strings.Contains(out.System, want) {
			t.Errorf("System lacks %q:\n%s", want, out.System)
		}
	}
	// The seed's order: core, gated section, profile, tasks, lessons, language.
	order := []string{"SYSTEM-TEXT", "SCHEDULING-TEXT", "User profile:", "User's scheduled tasks:", "Learned behavioral rules:", "IMPORTANT: Always respond"}
	last := -1
	for _, s := range order {
		i := strings.Index(out.System, s)
		if i <= last {
			t.Errorf("%q out of order in:\n%s", s, out.System)
		}
		last = i
	}
	if !slices.Contains(out.SectionsUsed, Scheduling) || !slices.Contains(out.SectionsUsed, BlockTasks) {
		t.Errorf("SectionsUsed = %v", out.SectionsUsed)
	}
}

func TestBuildEmptyTaskListIsStated(t *testing.T) {
	in := baseInput("schedule a call")
	in.PendingTasks = nil
	if out := Build(in); !strings.Contains(out.System, "User's scheduled tasks: none.") {
		t.Errorf("System should state there are no tasks:\n%s", out.System)
	}
}

func TestBuildContinuation(t *testing.T) {
	tests := []struct {
		msg         string
		wantIn      []string
		wantNot     []string
		wantSection []string
	}{
		{
			msg:         "hello",
			wantIn:      []string{"[Context update]\nCurrent time: Monday 2026-02-23 14:30 WET", "Respond in English.", "[End of context update]\n\nhello"},
			wantNot:     []string{"IDENTITY-TEXT", "SOUL-TEXT", "SYSTEM-TEXT", "SCHEDULING-TEXT", "Learned behavioral", "hello!", "User profile:"},
			wantSection: []string{BlockTime, BlockLanguage},
		},
		{
			msg:         "remind me tomorrow",
			wantIn:      []string{"SCHEDULING-TEXT", "User's scheduled tasks:", "timezone: Europe/Lisbon", "\n\nremind me tomorrow"},
			wantNot:     []string{"IDENTITY-TEXT", "PROJECTS-TEXT"},
			wantSection: []string{BlockTime, BlockLanguage, Scheduling, BlockProfile, BlockTasks},
		},
	}
	for _, tt := range tests {
		t.Run(tt.msg, func(t *testing.T) {
			in := baseInput(tt.msg)
			in.FirstInSession = false
			out := Build(in)
			for _, s := range tt.wantIn {
				if !strings.Contains(out.Continuation, s) {
					t.Errorf("Continuation lacks %q:\n%s", s, out.Continuation)
				}
			}
			for _, s := range tt.wantNot {
				if strings.Contains(out.Continuation, s) {
					t.Errorf("Continuation should not contain %q:\n%s", s, out.Continuation)
				}
			}
			if !slices.Equal(out.ContinuationSections, tt.wantSection) {
				t.Errorf("ContinuationSections = %v, want %v", out.ContinuationSections, tt.wantSection)
			}
			if !strings.Contains(out.System, "IDENTITY-TEXT") {
				t.Error("System must stay complete as the fallback for a failed resume")
			}
		})
	}
}

func TestBuildGroupPlatformProjectLanguage(t *testing.T) {
	in := baseInput("what do you think?")
	in.IsGroup = true
	in.PlatformHint = "Platform: WhatsApp. Avoid markdown tables and headers."
	in.Language = "Spanish"
	in.Personality = "short and dry"
	in.Projects = []string{"trader", "garden"}
	in.ActiveProject = "trader"
	in.ProjectRole = "You are a trading assistant."
	in.Skills = []string{"weather"}
	out := Build(in)
	for _, want := range []string{
		"reply with exactly SILENT",
		"Platform: WhatsApp",
		"IMPORTANT: Always respond in Spanish.",
		"Personality preference from the user",
		"Available projects: trader, garden. Active project: trader.",
		"Active project \"trader\" instructions:\nYou are a trading assistant.",
		"Available skills (",
		"\n- weather",
		"[Project: trader]",
	} {
		if !strings.Contains(out.System, want) {
			t.Errorf("System lacks %q:\n%s", want, out.System)
		}
	}
	for _, s := range []string{BlockGroupRules, BlockPlatform, BlockProjectBadge, BlockProjectAwareness, BlockProjectRole, BlockPersonality, BlockSkills} {
		if !slices.Contains(out.SectionsUsed, s) {
			t.Errorf("SectionsUsed lacks %s: %v", s, out.SectionsUsed)
		}
	}
}

// A resumed session gets the project's badge and role in its context
// update; without an active project neither appears anywhere.
func TestProjectBlocksInContinuationAndWithoutProject(t *testing.T) {
	in := baseInput("hello")
	in.FirstInSession = false
	in.Projects = []string{"trader"}
	in.ActiveProject, in.ProjectRole = "trader", "You are a trading assistant."
	out := Build(in)
	for _, want := range []string{"[Project: trader]", "You are a trading assistant."} {
		if !strings.Contains(out.Continuation, want) || !strings.Contains(out.System, want) {
			t.Errorf("%q missing:\n%s", want, out.Continuation)
		}
	}
	in.ActiveProject = ""
	out = Build(in)
	for _, text := range []string{out.System, out.Continuation} {
		if strings.Contains(text, "[Project:") || strings.Contains(text, "trading assistant") || !strings.Contains(text, "No project is active.") {
			t.Errorf("inactive project leaks:\n%s", text)
		}
	}
}

func TestBuildMetaIncludesHeartbeatChecklist(t *testing.T) {
	in := baseInput("add a heartbeat check for disk usage")
	in.Heartbeat = "- disk below 90%"
	out := Build(in)
	if !strings.Contains(out.System, "META-TEXT") || !strings.Contains(out.System, "Current heartbeat checklist:\n- disk below 90%") {
		t.Errorf("System lacks Meta and checklist:\n%s", out.System)
	}
	in = baseInput("hello")
	in.Heartbeat = "- disk below 90%"
	if out := Build(in); strings.Contains(out.System, "heartbeat checklist") {
		t.Error("checklist must be gated with Meta")
	}
}

func TestBuildMissingSectionIsSkipped(t *testing.T) {
	in := baseInput("remind me tomorrow")
	in.Prompts = map[string]string{Identity: "ID"}
	out := Build(in)
	if slices.Contains(out.SectionsUsed, Scheduling) || slices.Contains(out.SectionsUsed, Soul) {
		t.Errorf("absent sections must not be reported as used: %v", out.SectionsUsed)
	}
}

func BenchmarkBuild(b *testing.B) {
	in := baseInput("remind me tomorrow to call Juan at 5pm")
	in.FirstInSession = false
	for b.Loop() {
		Build(in)
	}
}

func BenchmarkGate(b *testing.B) {
	msg := strings.Repeat("this is a fairly ordinary message without keywords ", 10)
	for b.Loop() {
		Gate(msg)
	}
}

// The first message of a new conversation recalls the recent summaries
// whatever it says; later messages only when they ask to recall.
func TestNewConversationRecallsSummaries(t *testing.T) {
	in := baseInput("hello")
	in.NewConversation = true
	if out := Build(in); !strings.Contains(out.System, "Recent conversation summaries:\n- Talked about the trip to Porto") ||
		!slices.Contains(out.SectionsUsed, BlockSummaries) {
		t.Fatalf("a new conversation lacks the summaries:\n%s", out.System)
	}
	in.NewConversation, in.Summaries = true, nil
	if out := Build(in); slices.Contains(out.SectionsUsed, BlockSummaries) {
		t.Fatal("an empty summaries block was added")
	}
}
