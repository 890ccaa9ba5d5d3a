package slash

import (
	"cmp"
	"context"
	"strings"

	"github.com/omega-gateway/omega/domain/heartbeat"
	"github.com/omega-gateway/omega/domain/i18n"
	"github.com/omega-gateway/omega/eventstore"
)

func (c *Commands) heartbeat(ctx context.Context, call *cmdCall) (string, error) {
	var hb heartbeat.Heartbeat
	scope := cmp.Or(call.profile.ActiveProject, heartbeat.GlobalHeartbeat)
	if _, err := eventstore.Fold(ctx, c.Store(), c.Registry(), heartbeat.HeartbeatStream(scope), &hb); err != nil {
		return "", err
	}
	lines := checklistLines(hb.Items)
	if lines == nil {
		return i18n.More(call.lang, i18n.NothingYet), nil
	}
	out := i18n.More(call.lang, i18n.HeartbeatReport, cmp.Or(hb.Interval, c.HeartbeatMinutes, DefaultHeartbeatMinutes), strings.Join(lines, "\n"))
	if c.HeartbeatNext != nil {
		if next, ok := c.HeartbeatNext(ctx, scope); ok {
			out += "\n" + i18n.More(call.lang, i18n.HeartbeatNext, c.when(next), cmp.Or(strings.Join(hb.Suppressed, ", "), "-"))
		}
	}
	return out, nil
}

// checklistLines shows a checklist: a "## Section — note" header as the
// section's name, each item as a bullet; nil when there is no item.
func checklistLines(items []string) []string {
	var lines []string
	n := 0
	for _, it := range items {
		if name := heartbeat.HeartbeatSectionName(it); name != "" {
			lines = append(lines, name+":")
			continue
		}
		lines = append(lines, "- "+it)
		n++
	}
	if n == 0 {
		return nil
	}
	return lines
}
