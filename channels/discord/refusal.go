package discord

import (
	"errors"
	"time"

	"github.com/gorilla/websocket"
)

// refusedRetry is the wait after Discord refused the bot itself (its
// token or its intents): retrying sooner cannot help until a person
// fixes the settings, and the outage is recorded and alerted all the
// same.
const refusedRetry = 5 * time.Minute

// Gateway close codes that no reconnection can cure
// (https://discord.com/developers/docs/topics/opcodes-and-status-codes).
var refusals = map[int]string{
	4004: "Discord refused the bot token (close 4004): check OMEGA_DISCORD_TOKEN (Developer Portal → Bot → Reset Token)",
	4013: "Discord refused the gateway intents (close 4013)",
	4014: "Discord refused the Message Content intent (close 4014): switch on Message Content Intent under Developer Portal → Bot → Privileged Gateway Intents",
}

// refused says why Discord will not take the bot, if the connection
// ended with one of the codes no retry can cure.
func refused(err error) (string, bool) {
	var ce *websocket.CloseError
	if !errors.As(err, &ce) {
		return "", false
	}
	why, ok := refusals[ce.Code]
	return why, ok
}
