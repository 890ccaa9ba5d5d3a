package export

import (
	"context"
	"fmt"
	"time"

	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/domain/heartbeat"
	"github.com/omega-gateway/omega/domain/selfheal"
	"github.com/omega-gateway/omega/domain/system"
	"github.com/omega-gateway/omega/domain/task"
)

// Kinds of the messages omega sends outside a turn.
const (
	KindReminder       = "reminder"
	KindHeartbeatAlert = "heartbeat_alert"
	KindSelfHeal       = "self_heal"
	KindOwnerAlert     = "owner_alert"
)

// Reader reads the whole log in order.
type Reader interface {
	ReadAll(ctx context.Context, after int64, limit int) ([]domain.Event, error)
}

// Recipient is whose notices are exported: the sender's channel and id,
// and whether they are the owner (self-healing escalations go to the
// owner and record no recipient of their own).
type Recipient struct {
	Channel, ID string
	Owner       bool
}

func (r Recipient) is(channel, chat string) bool { return channel == r.Channel && chat == r.ID }

// noticeTypes are the events that record a message sent outside a turn
// or its outcome; others are not decoded.
var noticeTypes = map[string]bool{
	"TaskScheduled": true, "TaskDelivered": true, "HeartbeatAlertStarted": true, "HeartbeatAlertSent": true,
	"HeartbeatAlertFailed": true, "SelfHealOwnerNotified": true, "OwnerAlerted": true,
}

// noticeScan follows the log's notices for one recipient.
type noticeScan struct {
	to    Recipient
	tasks map[string]bool // task id -> addressed to the recipient
	open  map[string]int  // stream -> its notice awaiting an outcome
	out   []Message
}

// Notices reads, from the whole log in order, the messages omega sent the
// recipient outside a turn: delivered reminders, heartbeat alerts,
// self-healing escalations and owner alerts.
func Notices(ctx context.Context, log Reader, dec Decoder, to Recipient) ([]Message, error) {
	s := &noticeScan{to: to, tasks: map[string]bool{}, open: map[string]int{}}
	const page = 1000
	var after int64
	for {
		evs, err := log.ReadAll(ctx, after, page)
		if err != nil {
			return nil, fmt.Errorf("read the log after %d: %w", after, err)
		}
		for _, e := range evs {
			if !noticeTypes[e.Type] {
				continue
			}
			p, err := dec.Decode(e)
			if err != nil {
				return nil, fmt.Errorf("decode %s at %d: %w", e.Type, e.Position, err)
			}
			s.take(e, p)
		}
		if len(evs) < page {
			return s.out, nil
		}
		after = evs[len(evs)-1].Position
	}
}

func (s *noticeScan) take(e domain.Event, p domain.Payload) {
	at := e.RecordedAt.UTC()
	switch ev := p.(type) {
	case task.TaskScheduled:
		s.tasks[ev.ID] = s.to.is(ev.Channel, ev.SenderID) || s.to.is(ev.Channel, ev.ChatID)
	case task.TaskDelivered:
		if s.tasks[ev.ID] {
			s.add(e.StreamID, Message{At: at, Kind: KindReminder, Text: ev.Text, Status: "sent"}, false)
		}
	case heartbeat.HeartbeatAlertStarted:
		if ev.Target == s.to.Channel+":"+s.to.ID {
			s.add(e.StreamID, Message{At: at, Kind: KindHeartbeatAlert, Text: ev.Text}, true)
		}
	case heartbeat.HeartbeatAlertSent:
		s.settle(e.StreamID, "sent")
	case heartbeat.HeartbeatAlertFailed:
		s.settle(e.StreamID, "failed")
	case selfheal.SelfHealOwnerNotified:
		s.selfHeal(e.StreamID, at, ev)
	case system.OwnerAlerted:
		if s.to.is(ev.Channel, ev.Chat) {
			s.add("", Message{At: at, Kind: KindOwnerAlert, Text: ev.Text, Status: statusOf(ev.Error)}, false)
		}
	}
}

// selfHeal takes an escalation: it is recorded before it is sent, and
// again with the error when sending failed.
func (s *noticeScan) selfHeal(stream string, at time.Time, ev selfheal.SelfHealOwnerNotified) {
	if !s.to.Owner {
		return
	}
	if ev.Error != "" {
		s.settle(stream, "failed")
		return
	}
	s.add(stream, Message{At: at, Kind: KindSelfHeal, Text: ev.Text, Status: "sent"}, true)
}

// add keeps a notice; awaiting marks one whose outcome follows on its
// stream.
func (s *noticeScan) add(stream string, m Message, awaiting bool) {
	m.Role = RoleAssistant
	s.out = append(s.out, m)
	if awaiting {
		s.open[stream] = len(s.out) - 1
	}
}

func (s *noticeScan) settle(stream, status string) {
	if i, ok := s.open[stream]; ok {
		s.out[i].Status = status
		delete(s.open, stream)
	}
}

func statusOf(err string) string {
	if err != "" {
		return "failed"
	}
	return "sent"
}
