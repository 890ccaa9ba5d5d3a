package whatsapp

import "log/slog"

// Client is the part of whatsmeow's client the channel uses, exported so
// that tests in other packages can drive a Channel with a double (see
// package whatsapptest) instead of a WhatsApp connection.
type Client = client

// NewWithClient creates the channel on cl rather than on a stored device:
// for tests that exercise the pipeline with constructed events.
func NewWithClient(cfg Config, cl Client, logger *slog.Logger, opts ...Option) *Channel {
	return newWithClient(cfg, cl, logger, opts...)
}
