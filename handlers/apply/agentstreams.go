package apply

import (
	"context"
	"fmt"

	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/domain/markers"
	"github.com/omega-gateway/omega/eventstore"
)

func applySelfHeal(ctx context.Context, h *Markers, _ *markerRun, md domain.Metadata, v markers.SelfHeal) (domain.AppliedMarker, error) {
	return onStream(ctx, h, md, domain.SelfHealStream, newSelfHeal, "self-heal", func(s *domain.SelfHeal) []domain.Payload {
		return s.Heal(v.Description, v.Verification)
	})
}

func applySelfHealResolved(ctx context.Context, h *Markers, _ *markerRun, md domain.Metadata, _ markers.SelfHealResolved) (domain.AppliedMarker, error) {
	return onStream(ctx, h, md, domain.SelfHealStream, newSelfHeal, "self-heal resolved", (*domain.SelfHeal).Resolve)
}

func applySkillImprove(ctx context.Context, h *Markers, _ *markerRun, md domain.Metadata, v markers.SkillImprove) (domain.AppliedMarker, error) {
	return onStream(ctx, h, md, domain.SkillStream(v.Skill), newSkill, "skill lesson for "+v.Skill, func(s *domain.Skill) []domain.Payload {
		return s.Improve(v.Skill, v.Lesson)
	})
}

func applyActionOutcome(ctx context.Context, h *Markers, run *markerRun, md domain.Metadata, v markers.ActionOutcome) (domain.AppliedMarker, error) {
	return onStream(ctx, h, md, domain.LearningStream(run.sender), newLearning, "outcome recorded", func(*domain.Learning) []domain.Payload {
		return []domain.Payload{domain.ActionOutcomeRecorded{Outcome: v.Outcome, Project: run.project}}
	})
}

func applyReward(ctx context.Context, h *Markers, run *markerRun, md domain.Metadata, v markers.Reward) (domain.AppliedMarker, error) {
	return onStream(ctx, h, md, domain.LearningStream(run.sender), newLearning, fmt.Sprintf("reward %+d", v.Score), func(*domain.Learning) []domain.Payload {
		return []domain.Payload{domain.RewardRecorded{Score: v.Score, Domain: v.Domain, Lesson: v.Lesson, Project: run.project, Source: run.source()}}
	})
}

func applyLesson(ctx context.Context, h *Markers, run *markerRun, md domain.Metadata, v markers.Lesson) (domain.AppliedMarker, error) {
	return onStream(ctx, h, md, domain.LearningStream(run.sender), newLearning, "lesson learned", func(l *domain.Learning) []domain.Payload {
		ps := l.Learn(v.Domain, v.Rule, run.project)
		for i, p := range ps {
			if e, ok := p.(domain.LessonLearned); ok {
				e.Source = run.source()
				ps[i] = e
			}
		}
		return ps
	})
}

// Fresh states of the agent's own aggregates, one per load attempt.
func newLimitations() *domain.Limitations { return &domain.Limitations{} }
func newSelfHeal() *domain.SelfHeal       { return &domain.SelfHeal{} }
func newSkill() *domain.Skill             { return &domain.Skill{} }
func newLearning() *domain.Learning       { return &domain.Learning{} }
func newHeartbeat() *domain.Heartbeat     { return &domain.Heartbeat{} }

// onStream applies a decision on one of the agent's own streams, folded
// into a fresh S for each attempt.
func onStream[S eventstore.Aggregate](ctx context.Context, h *Markers, md domain.Metadata, stream string, fresh func() S, effect string, decide func(S) []domain.Payload) (domain.AppliedMarker, error) {
	done, decided, err := decideOnStream(ctx, h, md, stream, fresh, decide)
	if err != nil {
		return domain.AppliedMarker{}, err
	}
	if !done && decided == 0 {
		effect += ": nothing new"
	}
	return domain.AppliedMarker{Effect: effect, Stream: stream}, nil
}

// decideOnStream runs decide once per marker on stream; done: an earlier
// run of the marker recorded it, decided: how many events this run added.
func decideOnStream[S eventstore.Aggregate](ctx context.Context, h *Markers, md domain.Metadata, stream string, fresh func() S, decide func(S) []domain.Payload) (done bool, decided int, err error) {
	var state S
	done, err = h.Once(ctx, stream, md, func() eventstore.Aggregate { state = fresh(); return state },
		func() ([]domain.Payload, error) { ps := decide(state); decided = len(ps); return ps, nil })
	return done, decided, err
}
