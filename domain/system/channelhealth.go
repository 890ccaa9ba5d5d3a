package system

// Channel health events: a receiving channel stopped (the platform
// failed its requests, or a receive call went unanswered past its
// deadline) and resumed. They are recorded on the channel's own stream,
// once per change, not once per failed call.
type (
	ChannelDown struct {
		Channel     string `json:"channel"`
		Error       string `json:"error"`
		FailedPolls int    `json:"failed_polls"`
	}
	ChannelStalled struct {
		Channel     string `json:"channel"`
		Error       string `json:"error"`
		FailedPolls int    `json:"failed_polls"`
	}
	ChannelRecovered struct {
		Channel     string `json:"channel"`
		FailedPolls int    `json:"failed_polls"`
		DownMs      int64  `json:"down_ms"`
	}
)

func (ChannelDown) EventType() string      { return "ChannelDown" }
func (ChannelStalled) EventType() string   { return "ChannelStalled" }
func (ChannelRecovered) EventType() string { return "ChannelRecovered" }

// ChannelStream is where a channel's health changes and the owner alerts
// about them are recorded.
func ChannelStream(channel string) string { return "channel-" + channel }

// OwnerAlerted kinds about a channel.
const (
	AlertChannelDown      = "channel_down"
	AlertChannelRecovered = "channel_recovered"
)
