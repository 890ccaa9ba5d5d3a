package gather

import (
	"context"
	"fmt"
	"slices"

	"github.com/omega-gateway/omega/domain/learning"
	"github.com/omega-gateway/omega/domain/promptctx"
	"github.com/omega-gateway/omega/eventstore"
)

// Recall of past conversations (seed 3.7: summaries on recall keywords).
const (
	// recentSummaries is how many past conversations' summaries a context
	// recalls, as the seed's get_all_recent_summaries(3).
	recentSummaries = 3
	// recalledSummaries is how many older conversations a recall adds, the
	// best matches of the message among the last recallScan summaries.
	recalledSummaries = 3
	recallScan        = 200
)

// summaries are the past conversations of the chat a context recalls: the recent ones
// when a new conversation starts or the message asks to recall, and on a
// recall also the older summaries that best match the message's words.
func (g *Gatherer) summaries(ctx context.Context, chat, project, message string, newConversation bool) ([]string, error) {
	recall := promptctx.Gate(message).Recall
	if !newConversation && !recall {
		return nil, nil
	}
	if !recall {
		return g.Read.RecentSummaries(ctx, chat, project, recentSummaries)
	}
	all, err := g.Read.RecentSummaries(ctx, chat, project, recallScan)
	if err != nil {
		return nil, err
	}
	recent := all[:min(len(all), recentSummaries)]
	out := slices.Clone(recent)
	for _, s := range promptctx.MatchSummaries(message, all[len(recent):], recalledSummaries) {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out, nil
}

// maxLearning bounds how many lessons and outcomes reach the prompt.
const maxLearning = 20

// learning returns what the sender's turns taught, as the seed scopes it:
// a project's lessons and outcomes only while it is active (labelled and
// first), general ones everywhere; one project's never steer another.
func (g *Gatherer) learning(ctx context.Context, snd, project string) (lessons, outcomes []string, err error) {
	var l learning.Learning
	if _, err := eventstore.Fold(ctx, g.Store, g.Registry, learning.LearningStream(snd), &l); err != nil {
		return nil, nil, err
	}
	var own, general, ownOut, generalOut []string
	for _, x := range l.Lessons {
		own, general = scoped(own, general, x.Project, project, fmt.Sprintf("[%s] %s", x.Domain, x.Rule))
	}
	for _, r := range l.Rewards {
		ownOut, generalOut = scoped(ownOut, generalOut, r.Project, project, fmt.Sprintf("(%+d) [%s] %s", r.Score, r.Domain, r.Lesson))
	}
	for _, o := range l.Outcomes {
		ownOut, generalOut = scoped(ownOut, generalOut, o.Project, project, o.Outcome)
	}
	return projectFirst(own, general), projectFirst(ownOut, generalOut), nil
}

// scoped files one learned item of project of under the active project's
// own items (labelled with the project) or the general ones; another
// project's item goes nowhere.
func scoped(own, general []string, of, active, text string) ([]string, []string) {
	switch of {
	case "":
		return own, append(general, text)
	case active:
		return append(own, "["+active+"] "+text), general
	}
	return own, general
}

// projectFirst is the project's latest items, then the latest general ones
// in the room left under maxLearning.
func projectFirst(own, general []string) []string {
	own = lastN(own, maxLearning)
	return append(own, lastN(general, maxLearning-len(own))...)
}

func lastN(xs []string, n int) []string {
	if len(xs) > n {
		return xs[len(xs)-n:]
	}
	return xs
}
