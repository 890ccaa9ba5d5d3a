package discord

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/bwmarrin/discordgo"

	"github.com/omega-gateway/omega/channels"
)

const (
	// maxAttachment is above Discord's upload limit for bots (25 MB).
	maxAttachment = 30 << 20
	// NoteAttachmentFailed replaces an attachment that could not be
	// downloaded, so the model knows one was sent.
	NoteAttachmentFailed = "[an attachment could not be downloaded]"
)

// deliverAll hands the queued messages to deliver in order, retrying a
// message the pipeline failed to record until it is recorded or ctx
// ends: Discord does not send a message twice, so giving up loses it.
func (c *Channel) deliverAll(ctx context.Context, queue <-chan *discordgo.Message, deliver channels.Deliver) {
	for {
		select {
		case <-ctx.Done():
			return
		case m := <-queue:
			in, ok := c.toIncoming(ctx, m)
			if !ok {
				continue
			}
			for attempt := 1; ; attempt++ {
				err := deliver(ctx, in)
				if err == nil {
					c.advance(ctx, m)
					break
				}
				if ctx.Err() != nil {
					return
				}
				c.log.Error("discord: the pipeline did not record a message, retrying", "message", in.PlatformID, "attempt", attempt, "err", err)
				if c.sleep(ctx, min(time.Duration(attempt)*time.Second, max(c.cfg.BackoffMax, time.Second))) != nil {
					return
				}
			}
		}
	}
}

// advance stores that m was recorded, so an omega started again reads
// back only what came after it.
func (c *Channel) advance(ctx context.Context, m *discordgo.Message) {
	if err := c.cursor.save(ctx, m.ChannelID, m.ID); err != nil {
		c.log.Warn("discord: cursor not stored; a restart may read this message back (the pipeline drops it)", "message", m.ID, "err", err)
	}
}

// toIncoming maps a message to the pipeline's; ok is false for messages
// skipped on purpose (the bot's own, other bots', system messages, guild
// messages not addressed to the bot in mention mode).
func (c *Channel) toIncoming(ctx context.Context, m *discordgo.Message) (channels.Incoming, bool) {
	bot := c.botUser()
	switch {
	case m == nil || m.Author == nil:
		return channels.Incoming{}, false
	case m.Author.Bot || m.Author.ID == bot:
		return channels.Incoming{}, false
	case m.Type != discordgo.MessageTypeDefault && m.Type != discordgo.MessageTypeReply:
		c.log.Debug("discord message type ignored", "message", m.ID, "type", m.Type)
		return channels.Incoming{}, false
	}
	isGroup := m.GuildID != ""
	mentioned := addressed(m, bot)
	if isGroup && c.cfg.GroupMode == GroupModeMention && !mentioned {
		c.log.Debug("discord guild message without mention skipped", "message", m.ID)
		return channels.Incoming{}, false
	}
	in := channels.Incoming{
		Channel: Name, SenderID: m.Author.ID, SenderName: senderName(m), ChatID: m.Author.ID,
		Text: stripMention(m.Content, bot), PlatformID: m.ID, IsGroup: isGroup, Mentioned: mentioned, ReceivedAt: m.Timestamp,
	}
	if isGroup {
		in.ChatID = guildChat(m.ChannelID)
	} else {
		c.dms.remember(m.Author.ID, m.ChannelID)
	}
	if in.ReceivedAt.IsZero() {
		in.ReceivedAt = time.Now()
	}
	for _, a := range m.Attachments {
		att, err := c.download(ctx, a)
		if err != nil {
			c.log.Warn("discord attachment dropped", "message", m.ID, "file", a.Filename, "err", err)
			in.Text = strings.TrimSpace(NoteAttachmentFailed + "\n" + in.Text)
			continue
		}
		in.Attachments = append(in.Attachments, att)
	}
	return in, true
}

// addressed reports whether m mentions or replies to the bot.
func addressed(m *discordgo.Message, bot string) bool {
	if bot == "" {
		return false
	}
	for _, u := range m.Mentions {
		if u != nil && u.ID == bot {
			return true
		}
	}
	return m.ReferencedMessage != nil && m.ReferencedMessage.Author != nil && m.ReferencedMessage.Author.ID == bot
}

func stripMention(text, bot string) string {
	if bot != "" {
		text = strings.NewReplacer("<@"+bot+">", "", "<@!"+bot+">", "").Replace(text)
	}
	return strings.TrimSpace(text)
}

func senderName(m *discordgo.Message) string {
	switch {
	case m.Member != nil && m.Member.Nick != "":
		return m.Member.Nick
	case m.Author.GlobalName != "":
		return m.Author.GlobalName
	}
	return m.Author.Username
}

// download fetches an attachment from Discord's CDN.
func (c *Channel) download(ctx context.Context, a *discordgo.MessageAttachment) (channels.Attachment, error) {
	if a.Size > maxAttachment {
		return channels.Attachment{}, fmt.Errorf("%d bytes, over the %d byte limit", a.Size, maxAttachment)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, a.URL, nil)
	if err != nil {
		return channels.Attachment{}, fmt.Errorf("attachment url: %w", err)
	}
	resp, err := c.sess.Client.Do(req)
	if err != nil {
		return channels.Attachment{}, fmt.Errorf("download: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return channels.Attachment{}, fmt.Errorf("download: HTTP %d", resp.StatusCode)
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxAttachment+1))
	if err != nil {
		return channels.Attachment{}, fmt.Errorf("download: %w", err)
	}
	if len(data) > maxAttachment {
		return channels.Attachment{}, fmt.Errorf("over the %d byte limit", maxAttachment)
	}
	mime := a.ContentType
	if mime == "" {
		mime = http.DetectContentType(data)
	}
	return channels.Attachment{Name: a.Filename, MIME: mime, Data: data}, nil
}
