package turn

import "github.com/omega-gateway/omega/domain"

// The reply a turn sends is, as a rule, its ReplyReady text word for
// word; the ReplySent leaves it out then instead of recording it again.

// WithoutReadyText returns e as it is recorded: without its text when that
// is the ReplyReady text (ready, nil when the turn has none) and was sent
// in at least one chunk.
func (e ReplySent) WithoutReadyText(ready *ReplyReady) ReplySent {
	if ready != nil && e.Chunks > 0 && e.Text == ready.Text {
		e.Text = ""
	}
	return e
}

// LeavesTextToReady reports whether the event's text is the ReplyReady's
// before it (recorded by WithoutReadyText).
func (e ReplySent) LeavesTextToReady() bool { return e.Text == "" && e.Chunks > 0 }

// SentText is the text the reply delivered, given the turn's ReplyReady
// text: the event's own, else the ready text it left out.
func (e ReplySent) SentText(ready string) string {
	if e.LeavesTextToReady() {
		return ready
	}
	return e.Text
}

// SentTexts gives the ReplySent events of a turn, read in order, their
// text: a reader that decodes one event at a time passes each payload
// through Fill.
type SentTexts struct{ ready string }

// Fill returns p, a ReplySent with the ReplyReady text it left out.
func (s *SentTexts) Fill(p domain.Payload) domain.Payload {
	switch e := p.(type) {
	case ReplyReady:
		s.ready = e.Text
	case ReplySent:
		e.Text = e.SentText(s.ready)
		return e
	}
	return p
}
