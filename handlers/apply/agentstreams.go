package apply

import (
	"context"
	"fmt"

	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/domain/catalog"
	"github.com/omega-gateway/omega/domain/heartbeat"
	"github.com/omega-gateway/omega/domain/learning"
	"github.com/omega-gateway/omega/domain/markers"
	"github.com/omega-gateway/omega/domain/selfheal"
	"github.com/omega-gateway/omega/eventstore"
)

func applySelfHeal(ctx context.Context, h *Markers, _ *markerRun, md domain.Metadata, v markers.SelfHeal) (markers.AppliedMarker, error) {
	return onStream(ctx, h, md, selfheal.SelfHealStream, newSelfHeal, "self-heal", func(s *selfheal.SelfHeal) []domain.Payload {
		return s.Heal(v.Description, v.Verification)
	})
}

func applySelfHealResolved(ctx context.Context, h *Markers, _ *markerRun, md domain.Metadata, _ markers.SelfHealResolved) (markers.AppliedMarker, error) {
	return onStream(ctx, h, md, selfheal.SelfHealStream, newSelfHeal, "self-heal resolved", (*selfheal.SelfHeal).Resolve)
}

func applySkillImprove(ctx context.Context, h *Markers, _ *markerRun, md domain.Metadata, v markers.SkillImprove) (markers.AppliedMarker, error) {
	return onStream(ctx, h, md, catalog.SkillStream(v.Skill), newSkill, "skill lesson for "+v.Skill, func(s *catalog.Skill) []domain.Payload {
		return s.Improve(v.Skill, v.Lesson)
	})
}

func applyActionOutcome(ctx context.Context, h *Markers, run *markerRun, md domain.Metadata, v markers.ActionOutcome) (markers.AppliedMarker, error) {
	return onStream(ctx, h, md, learning.LearningStream(run.sender), newLearning, "outcome recorded", func(*learning.Learning) []domain.Payload {
		return []domain.Payload{learning.ActionOutcomeRecorded{Outcome: v.Outcome, Project: run.project}}
	})
}

func applyReward(ctx context.Context, h *Markers, run *markerRun, md domain.Metadata, v markers.Reward) (markers.AppliedMarker, error) {
	return onStream(ctx, h, md, learning.LearningStream(run.sender), newLearning, fmt.Sprintf("reward %+d", v.Score), func(*learning.Learning) []domain.Payload {
		return []domain.Payload{learning.RewardRecorded{Score: v.Score, Domain: v.Domain, Lesson: v.Lesson, Project: run.project, Source: run.source()}}
	})
}

func applyLesson(ctx context.Context, h *Markers, run *markerRun, md domain.Metadata, v markers.Lesson) (markers.AppliedMarker, error) {
	return onStream(ctx, h, md, learning.LearningStream(run.sender), newLearning, "lesson learned", func(l *learning.Learning) []domain.Payload {
		ps := l.Learn(v.Domain, v.Rule, run.project)
		for i, p := range ps {
			if e, ok := p.(learning.LessonLearned); ok {
				e.Source = run.source()
				ps[i] = e
			}
		}
		return ps
	})
}

// Fresh states of the agent's own aggregates, one per load attempt.
func newLimitations() *learning.Limitations { return &learning.Limitations{} }
func newSelfHeal() *selfheal.SelfHeal       { return &selfheal.SelfHeal{} }
func newSkill() *catalog.Skill              { return &catalog.Skill{} }
func newLearning() *learning.Learning       { return &learning.Learning{} }
func newHeartbeat() *heartbeat.Heartbeat    { return &heartbeat.Heartbeat{} }

// onStream applies a decision on one of the agent's own streams, folded
// into a fresh S for each attempt.
func onStream[S eventstore.Aggregate](ctx context.Context, h *Markers, md domain.Metadata, stream string, fresh func() S, effect string, decide func(S) []domain.Payload) (markers.AppliedMarker, error) {
	done, decided, err := decideOnStream(ctx, h, md, stream, fresh, decide)
	if err != nil {
		return markers.AppliedMarker{}, err
	}
	if !done && decided == 0 {
		effect += ": nothing new"
	}
	return markers.AppliedMarker{Effect: effect, Stream: stream}, nil
}

// decideOnStream runs decide once per marker on stream; done: an earlier
// run of the marker recorded it, decided: how many events this run added.
func decideOnStream[S eventstore.Aggregate](ctx context.Context, h *Markers, md domain.Metadata, stream string, fresh func() S, decide func(S) []domain.Payload) (done bool, decided int, err error) {
	var state S
	done, err = h.Once(ctx, stream, md, func() eventstore.Aggregate { state = fresh(); return state },
		func() ([]domain.Payload, error) { ps := decide(state); decided = len(ps); return ps, nil })
	return done, decided, err
}
