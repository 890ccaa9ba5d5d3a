package heartbeat

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/domain/catalog"
	"github.com/omega-gateway/omega/domain/learning"
	"github.com/omega-gateway/omega/domain/promptctx"
	"github.com/omega-gateway/omega/domain/sender"
	"github.com/omega-gateway/omega/eventstore"
)

// Profiles loads a sender's profile (facts).
type Profiles interface {
	Load(ctx context.Context, channel, senderID string) (sender.SenderProfile, error)
}

// Summaries reads the latest conversation summaries.
type Summaries interface {
	RecentSummaries(ctx context.Context, snd, project string, limit int) ([]string, error)
}

// Sections are the system prompt's sections and sandbox constraint.
type Sections interface {
	Sections() map[string]string
	Sandbox(mode string) string
}

// Enricher is the Context of check-ins: the owner's facts, last three
// summaries, lessons and recent outcomes (the project's where one runs),
// and the full system prompt with the project's ROLE.md.
type Enricher struct {
	store       eventstore.Store
	registry    *domain.Registry
	profiles    Profiles
	summaries   Summaries
	sections    Sections
	sandbox     string
	projectsDir string
	// Projects, when set, gives the projects' roles from the log (package
	// projects) instead of their folder.
	Projects ProjectRoles
}

// ProjectRoles reads the project definitions recorded in the log.
type ProjectRoles interface {
	Load(ctx context.Context) (catalog.Projects, error)
}

// NewEnricher checks the dependencies and returns an enricher.
func NewEnricher(store eventstore.Store, reg *domain.Registry, profiles Profiles, summaries Summaries, sections Sections, sandbox, projectsDir string) (*Enricher, error) {
	if store == nil || reg == nil || profiles == nil || summaries == nil || sections == nil {
		return nil, errors.New("heartbeat: enricher needs store, registry, profiles, summaries and sections")
	}
	return &Enricher{store: store, registry: reg, profiles: profiles, summaries: summaries, sections: sections,
		sandbox: sandbox, projectsDir: projectsDir}, nil
}

// Deactivated implements Context: the owner left the project with
// /project off or PROJECT_DEACTIVATE (recorded on their stream).
func (e *Enricher) Deactivated(ctx context.Context, t Target, project string) (bool, error) {
	if t.Channel == "" {
		return false, nil
	}
	p, err := e.profiles.Load(ctx, t.Channel, t.Chat)
	if err != nil {
		return false, fmt.Errorf("load profile of %s: %w", t, err)
	}
	return p.Deactivated[project], nil
}

// maxEnrichment bounds lessons and outcomes in a check-in's prompt.
const maxEnrichment = 20

// Enrichment implements Context.
func (e *Enricher) Enrichment(ctx context.Context, t Target, project string) (string, error) {
	if t.Channel == "" {
		return "", nil
	}
	p, err := e.profiles.Load(ctx, t.Channel, t.Chat)
	if err != nil {
		return "", fmt.Errorf("load profile of %s: %w", t, err)
	}
	snd := sender.SenderKey(t.Channel, t.Chat)
	summaries, err := e.summaries.RecentSummaries(ctx, snd, project, 3)
	if err != nil {
		return "", err
	}
	l := learningSince{project: project, since: time.Now().Add(-24 * time.Hour)}
	if _, err := eventstore.Fold(ctx, e.store, e.registry, learning.LearningStream(snd), &l); err != nil {
		return "", err
	}
	lessons := append(l.scoped, l.general...)
	outcomes := l.outcomes
	var facts []string
	for _, f := range p.SortedFacts() {
		facts = append(facts, f[0]+": "+f[1])
	}
	var b strings.Builder
	block(&b, "Known facts about the user", facts)
	block(&b, "Recent conversation summaries", summaries)
	block(&b, "Learned behavioral rules (they override checklist items)", lessons[:min(len(lessons), maxEnrichment)])
	block(&b, "Recent outcomes", last(outcomes))
	return strings.TrimSpace(b.String()), nil
}

// learningSince gathers a check-in's learning: the project's lessons
// first, then the general ones, and the outcomes of the last 24 hours.
type learningSince struct {
	project         string
	since           time.Time
	scoped, general []string
	outcomes        []string
}

func (l *learningSince) Apply(p domain.Payload, _ int64, at time.Time) {
	switch e := p.(type) {
	case learning.LessonLearned:
		line := fmt.Sprintf("[%s] %s", e.Domain, e.Rule)
		switch e.Project {
		case l.project:
			if l.project != "" {
				l.scoped = append(l.scoped, line)
			} else {
				l.general = append(l.general, line)
			}
		case "":
			l.general = append(l.general, line)
		}
	case learning.RewardRecorded:
		if at.After(l.since) && (e.Project == l.project || e.Project == "") {
			l.outcomes = append(l.outcomes, fmt.Sprintf("(%+d) [%s] %s", e.Score, e.Domain, e.Lesson))
		}
	case learning.ActionOutcomeRecorded:
		if at.After(l.since) && (e.Project == l.project || e.Project == "") {
			l.outcomes = append(l.outcomes, e.Outcome)
		}
	}
}

func last(xs []string) []string {
	if len(xs) > maxEnrichment {
		return xs[len(xs)-maxEnrichment:]
	}
	return xs
}

func block(b *strings.Builder, title string, lines []string) {
	if len(lines) == 0 {
		return
	}
	fmt.Fprintf(b, "%s:\n", title)
	for _, l := range lines {
		fmt.Fprintf(b, "- %s\n", l)
	}
	b.WriteString("\n")
}

// System implements Context: the full system prompt, with the project's
// ROLE.md when it has one.
func (e *Enricher) System(project string) string {
	role := ""
	if project != "" && e.Projects != nil {
		if known, err := e.Projects.Load(context.Background()); err == nil {
			role = known.Role(project)
		}
	} else if project != "" && e.projectsDir != "" && !strings.ContainsAny(project, `/\`) {
		if b, err := os.ReadFile(filepath.Join(e.projectsDir, project, "ROLE.md")); err == nil {
			role = string(b)
		}
	}
	return promptctx.Build(promptctx.Input{
		Prompts: e.sections.Sections(), Sandbox: e.sections.Sandbox(e.sandbox), FirstInSession: true,
		ActiveProject: project, ProjectRole: role,
	}).System
}
