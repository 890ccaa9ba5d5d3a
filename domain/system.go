package domain

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
func RegisterSystemEvents(r *Registry) {
	r.Register(MessagePoisoned{}, 1)
	r.Register(WebhookDelivered{}, 1)
}

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
