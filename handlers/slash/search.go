package slash

import (
	"context"
	"strings"
	"time"

	"github.com/omega-gateway/omega/domain/i18n"
	"github.com/omega-gateway/omega/projections/recall"
)

// Recaller searches the full-text index of conversations (recall.Index).
type Recaller interface {
	Search(ctx context.Context, q recall.Query) ([]recall.Hit, error)
}

// /search shows at most searchHits passages, each at most searchRunes.
const (
	searchHits  = 5
	searchRunes = 200
)

// search finds the words in the chat's conversations: the person's own in
// a private chat, the group's in a group, never another chat's.
func (c *Commands) search(ctx context.Context, call *cmdCall, arg string) (string, error) {
	arg = strings.TrimSpace(arg)
	if c.Recall == nil || len(recall.Terms(arg)) == 0 {
		return i18n.Search(call.lang, i18n.SearchUsage), nil
	}
	hits, err := c.Recall.Search(ctx, recall.Query{Text: arg, Chat: call.turn.Received.Chat().Key(), Limit: searchHits})
	if err != nil {
		return "", err
	}
	if len(hits) == 0 {
		return i18n.Search(call.lang, i18n.SearchNone, arg), nil
	}
	var b strings.Builder
	b.WriteString(i18n.Search(call.lang, i18n.SearchFound))
	for _, h := range hits {
		text := strings.Join(strings.Fields(h.Text), " ")
		if r := []rune(text); len(r) > searchRunes {
			text = string(r[:searchRunes]) + "…"
		}
		b.WriteString("\n- " + h.At.In(c.location()).Format(time.DateOnly) + ": " + text)
	}
	return b.String(), nil
}

func (c *Commands) location() *time.Location {
	if c.Location == nil {
		return time.UTC
	}
	return c.Location
}
