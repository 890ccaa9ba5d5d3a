package rerun

import (
	"encoding/json"
	"regexp"

	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/domain/turn"
)

var (
	uuidRE = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)
	// volatile are fields that differ between any two runs: times,
	// durations, platform message ids.
	volatile = map[string]bool{"duration_ms": true, "received_at": true, "platform_ids": true, "fired_at": true,
		"dir": true} // the scratch run's workspace
	// clocked are events whose presence depends on how long the turn took
	// (an acknowledgement is sent only when the answer is slow), not on
	// any decision the turn made. A streamed reply's start says how the
	// reply showed, not what it was: re-runs compare the final events.
	clocked = map[string]bool{turn.AckSent{}.EventType(): true, turn.ReplyStreamStarted{}.EventType(): true}
	// unrecordedEmpty are events the driver no longer records when they
	// would say nothing (an empty finding of workspace images), so an
	// older turn's empty one compares equal to its absence.
	unrecordedEmpty = map[string]bool{turn.WorkspaceImagesFound{}.EventType(): true}
)

// normalize renders each event as one comparable line: its type and its
// data without volatile fields, ids replaced. Clocked events are left out.
func normalize(evs []domain.Event) []string {
	out := make([]string, 0, len(evs))
	var sent turn.SentTexts
	for _, e := range evs {
		if clocked[e.Type] || unrecordedEmpty[e.Type] && string(e.Data) == "{}" {
			continue
		}
		var data map[string]any
		if err := json.Unmarshal(e.Data, &data); err != nil {
			out = append(out, e.Type+" "+string(e.Data))
			continue
		}
		withSentText(&sent, e, data)
		strip(data)
		b, _ := json.Marshal(data) // maps marshal with sorted keys
		out = append(out, e.Type+" "+uuidRE.ReplaceAllString(string(b), "<id>"))
	}
	return out
}

// withSentText gives a ReplySent the text it left to the ReplyReady
// before it, so that a turn recorded before the text was left out
// compares equal to its re-run.
func withSentText(sent *turn.SentTexts, e domain.Event, data map[string]any) {
	var p domain.Payload
	switch e.Type {
	case turn.ReplyReady{}.EventType():
		var r turn.ReplyReady
		_ = json.Unmarshal(e.Data, &r) // data decoded already
		p = r
	case turn.ReplySent{}.EventType():
		var r turn.ReplySent
		_ = json.Unmarshal(e.Data, &r)
		p = r
	default:
		return
	}
	if r, ok := sent.Fill(p).(turn.ReplySent); ok && r.Text != "" {
		data["text"] = r.Text
	}
}

func strip(v any) {
	switch t := v.(type) {
	case map[string]any:
		for k, val := range t {
			if volatile[k] {
				delete(t, k)
				continue
			}
			strip(val)
		}
	case []any:
		for _, val := range t {
			strip(val)
		}
	}
}
