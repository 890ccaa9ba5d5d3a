package system

import "github.com/omega-gateway/omega/domain"

// MessagePoisoned records that a handler gave up on a message after its
// retries: the message is not lost, it is parked here with the reason.
type MessagePoisoned struct {
	Handler   string            `json:"handler"`
	Topic     string            `json:"topic"`
	Reason    string            `json:"reason"`
	MessageID string            `json:"message_id"`
	Name      string            `json:"name,omitempty"` // event or command type
	Payload   string            `json:"payload"`
	Metadata  map[string]string `json:"metadata,omitempty"`
}

func (MessagePoisoned) EventType() string { return "MessagePoisoned" }

// PoisonStream is where poisoned messages of one handler are recorded.
func PoisonStream(handler string) string { return "poison-" + handler }

// RegisterSystemEvents adds the infrastructure-level events.
func RegisterSystemEvents(r *domain.Registry) {
	r.Register(MessagePoisoned{}, 1)
	r.Register(WebhookDelivered{}, 1)
	r.Register(ProjectionEventPoisoned{}, 1)
	r.Register(CommandHandled{}, 1)
	r.Register(CommandFailed{}, 1)
	r.Register(ChannelDown{}, 1)
	r.Register(ChannelStalled{}, 1)
	r.Register(ChannelRecovered{}, 1)
	r.Register(OwnerAlerted{}, 1)
}

// CommandHandled records that a command on the bus was handled, so the
// process that sent it (maybe not the one that handled it) knows it ran.
type CommandHandled struct {
	CommandID string `json:"command_id"`
	Name      string `json:"name"`
}

func (CommandHandled) EventType() string { return "CommandHandled" }

// CommandFailed records that a command on the bus was given up on: it
// was rejected, or its retries were spent.
type CommandFailed struct {
	CommandID string `json:"command_id"`
	Name      string `json:"name"`
	Error     string `json:"error"`
}

func (CommandFailed) EventType() string { return "CommandFailed" }

// CommandStream is where the outcome of one command is recorded.
func CommandStream(id string) string { return "command-" + id }

// ProjectionEventPoisoned records that a projection could not apply an
// event although the database answered, a few times in a row, and went
// on without it: the read model lacks that event's effect, the log still
// holds it.
type ProjectionEventPoisoned struct {
	Projection string `json:"projection"`
	Position   int64  `json:"position"`
	StreamID   string `json:"stream_id"`
	Type       string `json:"event_type"`
	EventID    string `json:"event_id"`
	Error      string `json:"error"`
}

func (ProjectionEventPoisoned) EventType() string { return "ProjectionEventPoisoned" }

// ProjectionPoisonStream is where poisoned projection events are recorded.
var ProjectionPoisonStream = PoisonStream("projections")

// WebhookDelivered records a direct-mode webhook message sent to a channel.
type WebhookDelivered struct {
	Channel string `json:"channel"`
	ChatID  string `json:"chat_id"`
	Text    string `json:"text"`
	Chunks  int    `json:"chunks"`
	Error   string `json:"error,omitempty"` // set when delivery failed
}

func (WebhookDelivered) EventType() string { return "WebhookDelivered" }

// WebhookStream is where one webhook request is recorded.
func WebhookStream(id string) string { return "webhook-" + id }
