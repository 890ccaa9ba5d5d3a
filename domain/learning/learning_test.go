package learning_test

import (
	"reflect"
	"testing"
	"time"

	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/domain/learning"
)

func limitations(titles ...string) learning.Limitations {
	var l learning.Limitations
	for i, title := range titles {
		l.Apply(learning.LimitationReported{Title: title}, int64(i+1), time.Time{})
	}
	return l
}

func TestLimitationsReport(t *testing.T) {
	cases := []struct {
		name                     string
		known                    []string
		title, description, plan string
		want                     []domain.Payload
	}{
		{"a new limitation, trimmed", nil, " No browser ", " cannot browse\n", " add one ",
			[]domain.Payload{learning.LimitationReported{Title: "No browser", Description: "cannot browse", Plan: "add one"}}},
		{"another title", []string{"No browser"}, "No camera", "", "",
			[]domain.Payload{learning.LimitationReported{Title: "No camera"}}},
		{"a known title padded with spaces", []string{"No browser"}, "  no browser\t", "again", "", nil},
		{"a blank title", nil, " \n", "x", "y", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := limitations(c.known...).Report(c.title, c.description, c.plan)
			if !reflect.DeepEqual(got, c.want) {
				t.Fatalf("Report = %#v, want %#v", got, c.want)
			}
		})
	}
}

func TestLimitationsFold(t *testing.T) {
	var l learning.Limitations
	l.Apply(learning.BugReported{Description: "crash"}, 1, time.Time{})
	if l.Version != 1 || l.Titles != nil {
		t.Fatalf("after a bug report: %+v", l)
	}
	l.Apply(learning.LimitationReported{Title: "No Browser"}, 2, time.Time{})
	l.Apply(learning.LimitationReported{Title: "no browser"}, 3, time.Time{})
	if want := map[string]bool{"no browser": true}; l.Version != 3 || !reflect.DeepEqual(l.Titles, want) {
		t.Fatalf("after two reports of one title: %+v", l)
	}
}

func TestLearningLearn(t *testing.T) {
	known := learning.LessonLearned{Domain: "email", Rule: "Keep it short", Project: "work"}
	cases := []struct {
		name                string
		area, rule, project string
		want                []domain.Payload
	}{
		{"a new rule, trimmed", " calendar ", " Ask for the time zone ", "work",
			[]domain.Payload{learning.LessonLearned{Domain: "calendar", Rule: "Ask for the time zone", Project: "work"}}},
		{"the known rule padded with spaces", " Email", "keep it short  ", "work", nil},
		{"the known rule in a project differing only in case", "email", "Keep it short", "Work",
			[]domain.Payload{learning.LessonLearned{Domain: "email", Rule: "Keep it short", Project: "Work"}}},
		{"the known rule without a project", "email", "Keep it short", "",
			[]domain.Payload{learning.LessonLearned{Domain: "email", Rule: "Keep it short"}}},
		{"a rule without an area", "", "Be kind", "",
			[]domain.Payload{learning.LessonLearned{Rule: "Be kind"}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var l learning.Learning
			l.Apply(known, 1, time.Time{})
			if got := l.Learn(c.area, c.rule, c.project); !reflect.DeepEqual(got, c.want) {
				t.Fatalf("Learn = %#v, want %#v", got, c.want)
			}
		})
	}
}

// The fold keeps lessons, rewards and outcomes in the order they came and
// ignores the other events of the package.
func TestLearningFold(t *testing.T) {
	history := []domain.Payload{
		learning.RewardRecorded{Score: 1, Domain: "email", Lesson: "short wins", Source: "heartbeat"},
		learning.LessonLearned{Domain: "email", Rule: "Keep it short"},
		learning.LimitationReported{Title: "No browser"},
		learning.ActionOutcomeRecorded{Outcome: "sent", Project: "work"},
		learning.RewardRecorded{Score: -1, Domain: "tone"},
		learning.BugReported{Description: "crash"},
		learning.LessonLearned{Domain: "tone", Rule: "No jokes", Project: "work"},
	}
	var l learning.Learning
	for i, p := range history {
		l.Apply(p, int64(i+1), time.Time{})
	}
	want := learning.Learning{
		Version:  7,
		Lessons:  []learning.LessonLearned{history[1].(learning.LessonLearned), history[6].(learning.LessonLearned)},
		Rewards:  []learning.RewardRecorded{history[0].(learning.RewardRecorded), history[4].(learning.RewardRecorded)},
		Outcomes: []learning.ActionOutcomeRecorded{history[3].(learning.ActionOutcomeRecorded)},
	}
	if !reflect.DeepEqual(l, want) {
		t.Fatalf("fold = %+v\nwant %+v", l, want)
	}
}

func TestStreamsAndEventTypes(t *testing.T) {
	for _, c := range []struct{ got, want string }{
		{learning.LearningStream("telegram:1"), "learning-telegram:1"},
		{learning.LimitationsStream, "limitations"},
		{learning.BugReportsStream, "bugreports"},
	} {
		if c.got != c.want {
			t.Errorf("stream %q, want %q", c.got, c.want)
		}
	}
	r := domain.NewRegistry()
	learning.RegisterEvents(r)
	for _, name := range []string{"LimitationReported", "BugReported", "ActionOutcomeRecorded", "RewardRecorded", "LessonLearned"} {
		if p := r.Sample(name); p == nil || p.EventType() != name {
			t.Errorf("%s is not registered under its name: %#v", name, p)
		}
	}
	if n := len(r.Types()); n != 5 {
		t.Errorf("%d types registered, want 5", n)
	}
}
