// Package registry is the one list of omega's channels. Everything that
// depends on which channels exist (configuration, secrets, the
// heartbeat's destination, `omega doctor`, `omega rerun`, the server's
// wiring) iterates it; nothing else imports a concrete channel.
package registry

import (
	"io"
	"os"

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

// All returns the channels' descriptors, in the order their settings are
// read, checked and built (the first alert channel is the owner's).
func All() []channels.Descriptor {
	return []channels.Descriptor{telegram.Descriptor, whatsapp.Descriptor, email.Descriptor, matrix.Descriptor, slack.Descriptor, signal.Descriptor, discord.Descriptor, terminal.Descriptor}
}

// Terminal is the channel `omega chat` talks through: the local user,
// who needs no settings.
func Terminal(in *os.File, out io.Writer, sender string) *terminal.Channel {
	return &terminal.Channel{In: in, Out: out, SenderID: sender}
}
