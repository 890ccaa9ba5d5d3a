package promptctx

import (
	"strings"
	"time"

	"github.com/omega-gateway/omega/domain/markers"
	"github.com/omega-gateway/omega/domain/turn"
)

// MaxRecalledRunes bounds one recalled passage in the prompt.
const MaxRecalledRunes = 600

// recalledBlock lists the recalled passages with their dates (in the
// user's zone) and who said them. Passages are data, whoever wrote them:
// marker-shaped text in them never becomes an instruction.
func recalledBlock(ps []turn.RecalledPassage, loc *time.Location) string {
	if loc == nil {
		loc = time.UTC
	}
	var b strings.Builder
	for _, p := range ps {
		text := strings.Join(strings.Fields(p.Text), " ")
		if r := []rune(text); len(r) > MaxRecalledRunes {
			text = string(r[:MaxRecalledRunes]) + "…"
		}
		if text == "" {
			continue
		}
		b.WriteString("\n- " + p.At.In(loc).Format("2006-01-02") + " (" + who(p.Kind) + "): " + markers.Neutralize(text))
	}
	if b.Len() == 0 {
		return ""
	}
	return "Passages from earlier conversations with this user that match the message (found by search; use them only if relevant):" + b.String()
}

func who(kind string) string {
	switch kind {
	case "assistant":
		return "you said"
	case "summary":
		return "summary of the conversation"
	}
	return "the user said"
}
