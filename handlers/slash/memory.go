package slash

import (
	"context"
	"fmt"
	"strings"

	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/domain/i18n"
	"github.com/omega-gateway/omega/domain/learning"
	"github.com/omega-gateway/omega/domain/sender"
	"github.com/omega-gateway/omega/domain/turn"
	"github.com/omega-gateway/omega/eventstore"
)

func factsAnswer(call *cmdCall) string {
	facts := call.profile.SortedFacts()
	if len(facts) == 0 {
		return i18n.Text(call.lang, i18n.NoFacts)
	}
	lines := make([]string, len(facts))
	for i, f := range facts {
		lines[i] = "- " + f[0] + ": " + f[1]
	}
	return i18n.More(call.lang, i18n.FactsList, strings.Join(lines, "\n"))
}

func (c *Commands) memory(ctx context.Context, call *cmdCall) (string, error) {
	convs, err := c.Read().CountConversations(ctx, call.sender)
	if err != nil {
		return "", err
	}
	msgs, err := c.Read().CountMessages(ctx, call.sender)
	if err != nil {
		return "", err
	}
	return i18n.More(call.lang, i18n.MemoryReport, convs, msgs, len(call.profile.Facts)), nil
}

func (c *Commands) purge(ctx context.Context, call *cmdCall) (string, error) {
	if _, err := c.onSender(ctx, call, func(p sender.SenderProfile) []domain.Payload { return p.PurgeFacts() }); err != nil {
		return "", err
	}
	return i18n.Text(call.lang, i18n.FactsPurged), nil
}

// forget closes the chat's conversation and its provider session: in a
// group the group's, which its members share.
func (c *Commands) forget(ctx context.Context, call *cmdCall) (string, error) {
	project, chat := call.profile.ActiveProject, call.turn.Received.Chat()
	if _, err := c.onProfile(ctx, call, chat, func(p sender.SenderProfile) []domain.Payload { return p.ClearSession(project, "forget") }); err != nil {
		return "", err
	}
	conv, ok, err := c.Read().RecentConversation(ctx, chat.Key(), project, 0)
	if err != nil {
		return "", err
	}
	if ok {
		call.events = append(call.events, turn.ConversationClosed{ConversationID: conv.ID, Sender: call.sender, Project: project})
	}
	return i18n.Text(call.lang, i18n.ConversationCleared), nil
}

func (c *Commands) learning(ctx context.Context, call *cmdCall) (string, error) {
	var l learning.Learning
	if _, err := eventstore.Fold(ctx, c.Store(), c.Registry(), learning.LearningStream(call.sender), &l); err != nil {
		return "", err
	}
	var lines []string
	for _, x := range l.Lessons {
		lines = append(lines, fmt.Sprintf("- [%s] %s", x.Domain, x.Rule))
	}
	for _, r := range l.Rewards {
		lines = append(lines, fmt.Sprintf("- (%+d) [%s] %s", r.Score, r.Domain, r.Lesson))
	}
	if len(lines) == 0 {
		return i18n.More(call.lang, i18n.NothingYet), nil
	}
	return i18n.More(call.lang, i18n.LearningList, strings.Join(lines, "\n")), nil
}
