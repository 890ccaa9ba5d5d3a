package api

import (
	"io"
	"log/slog"
	"testing"

	"github.com/omega-gateway/omega/channels/channeltest"
)

// TestChannelConformance: the HTTP channel records input itself and
// pushes nothing, so of the port's contract it owes start and stop.
func TestChannelConformance(t *testing.T) {
	channeltest.Run(t, func(t *testing.T) channeltest.Harness {
		return channeltest.Harness{
			Channel: &Server{Addr: "127.0.0.1:0", Logger: slog.New(slog.NewTextHandler(io.Discard, nil))},
			ChatID:  "client",
		}
	})
}
