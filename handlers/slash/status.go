package slash

import (
	"cmp"
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/omega-gateway/omega/domain/i18n"
)

func (c *Commands) whatsApp(ctx context.Context, call *cmdCall) (string, error) {
	if c.WhatsApp == nil {
		return i18n.More(call.lang, i18n.WhatsAppDisabled), nil
	}
	if err := c.WhatsApp.SendQR(ctx, call.turn.Received.Channel, call.turn.Received.ChatID); err != nil {
		return "", fmt.Errorf("send whatsapp qr: %w", err)
	}
	return i18n.More(call.lang, i18n.WhatsAppQRSent), nil
}

func (c *Commands) uptime() string {
	return c.now().Sub(c.Started).Round(time.Second).String()
}

func (c *Commands) status(ctx context.Context, call *cmdCall) (string, error) {
	tasks, err := c.Read().SenderTasks(ctx, call.sender, true)
	if err != nil {
		return "", err
	}
	convs, err := c.Read().CountConversations(ctx, call.sender)
	if err != nil {
		return "", err
	}
	s := c.Status
	return i18n.More(call.lang, i18n.StatusReport, c.uptime(), s.Provider, s.Model, strings.Join(s.Channels, ", "),
		cmp.Or(s.Sandbox, "-"), s.Store, len(call.profile.Facts), len(tasks), convs), nil
}
