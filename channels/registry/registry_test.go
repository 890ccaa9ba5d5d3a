package registry

import (
	"testing"

	"github.com/omega-gateway/omega/channels"
	"github.com/omega-gateway/omega/channels/discord"
	"github.com/omega-gateway/omega/channels/email"
	"github.com/omega-gateway/omega/channels/matrix"
	"github.com/omega-gateway/omega/channels/signal"
	"github.com/omega-gateway/omega/channels/slack"
	"github.com/omega-gateway/omega/channels/telegram"
	"github.com/omega-gateway/omega/channels/terminal"
	"github.com/omega-gateway/omega/channels/whatsapp"
)

// A descriptor speaks for its channel: the same name and the same
// platform line the running channel gives the system prompt.
func TestDescriptorsMatchTheirChannels(t *testing.T) {
	live := map[string]interface {
		channels.Channel
		channels.FormatHinter
	}{telegram.Name: &telegram.Channel{}, whatsapp.Name: &whatsapp.Channel{}, email.Name: &email.Channel{}, matrix.Name: &matrix.Channel{}, slack.Name: &slack.Channel{}, signal.Name: &signal.Channel{}, discord.Name: &discord.Channel{},
		terminal.Name: &terminal.Channel{}}
	seen := map[string]bool{}
	for _, d := range All() {
		if seen[d.Name] {
			t.Errorf("%s is registered twice", d.Name)
		}
		seen[d.Name] = true
		ch, ok := live[d.Name]
		if !ok {
			t.Errorf("%s: no channel of that name", d.Name)
			continue
		}
		if d.Hint == "" || d.Hint != ch.FormatHint() {
			t.Errorf("%s: descriptor hint %q, channel's %q", d.Name, d.Hint, ch.FormatHint())
		}
		if d.Settings != nil && d.Settings().EnableVar() == "" {
			t.Errorf("%s: settings name nothing that turns the channel on", d.Name)
		}
	}
	if len(seen) != len(live) {
		t.Errorf("registered %v, channels %d", seen, len(live))
	}
}
