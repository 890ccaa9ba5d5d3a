package discord

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"

	"github.com/bwmarrin/discordgo"

	"github.com/omega-gateway/omega/channels"
)

// A chat is a user id (the DM with that user: what the allowlist, the
// owner's alerts and "discord:<user id>" targets name) or "#" and a guild
// channel's id.
const guildPrefix = "#"

func guildChat(channelID string) string { return guildPrefix + channelID }

// dmChannels maps users to their DM channels, learned from incoming
// messages or opened on first send.
type dmChannels struct {
	sess *discordgo.Session
	mu   sync.Mutex
	byID map[string]string
}

func newDMChannels(sess *discordgo.Session) *dmChannels {
	return &dmChannels{sess: sess, byID: map[string]string{}}
}

func (d *dmChannels) remember(user, channel string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.byID[user] = channel
}

func (d *dmChannels) open(ctx context.Context, user string) (string, error) {
	d.mu.Lock()
	id, ok := d.byID[user]
	d.mu.Unlock()
	if ok {
		return id, nil
	}
	ch, err := d.sess.UserChannelCreate(user, discordgo.WithContext(ctx))
	if err != nil {
		return "", fmt.Errorf("open DM with %s: %w", user, classify(err))
	}
	d.remember(user, ch.ID)
	return ch.ID, nil
}

// channelID is the Discord channel a chat id sends to.
func (c *Channel) channelID(ctx context.Context, chatID string) (string, error) {
	if id, ok := strings.CutPrefix(chatID, guildPrefix); ok {
		if !snowflake(id) {
			return "", fmt.Errorf("discord: chat %q: want a user id or #<channel id>: %w", chatID, channels.ErrRejected)
		}
		return id, nil
	}
	if !snowflake(chatID) {
		return "", fmt.Errorf("discord: chat %q: want a user id or #<channel id>: %w", chatID, channels.ErrRejected)
	}
	return c.dms.open(ctx, chatID)
}

// noPings keeps a reply from pinging @everyone, roles or users the model
// happened to name.
var noPings = &discordgo.MessageAllowedMentions{Parse: []discordgo.AllowedMentionType{}}

// SendText implements channels.Channel: Discord Markdown, in messages of
// at most 2,000 characters.
func (c *Channel) SendText(ctx context.Context, chatID, text string) (channels.SendResult, error) {
	ch, err := c.channelID(ctx, chatID)
	if err != nil {
		return channels.SendResult{}, err
	}
	var res channels.SendResult
	for _, chunk := range Messages(text) {
		m, err := c.sess.ChannelMessageSendComplex(ch, &discordgo.MessageSend{Content: chunk, AllowedMentions: noPings}, discordgo.WithContext(ctx))
		if err != nil {
			return res, fmt.Errorf("discord: send to %s (part %d): %w", chatID, res.Chunks+1, classify(err))
		}
		res.PlatformIDs = append(res.PlatformIDs, m.ID)
		res.Chunks++
	}
	return res, nil
}

// SendTyping implements channels.Channel: Discord shows it for 10 s or
// until the bot's next message.
func (c *Channel) SendTyping(ctx context.Context, chatID string) error {
	ch, err := c.channelID(ctx, chatID)
	if err != nil {
		return err
	}
	if err := c.sess.ChannelTyping(ch, discordgo.WithContext(ctx)); err != nil {
		return fmt.Errorf("discord: typing in %s: %w", chatID, classify(err))
	}
	return nil
}

// SendPhoto implements channels.Channel.
func (c *Channel) SendPhoto(ctx context.Context, chatID string, photo channels.Attachment, caption string) error {
	_, err := c.SendPhotoResult(ctx, chatID, photo, caption)
	return err
}

// SendPhotoResult implements channels.PhotoReporter: the image is
// uploaded (multipart) with the caption as the message's text.
func (c *Channel) SendPhotoResult(ctx context.Context, chatID string, photo channels.Attachment, caption string) (channels.SendResult, error) {
	ch, err := c.channelID(ctx, chatID)
	if err != nil {
		return channels.SendResult{}, err
	}
	name := photo.Name
	if name == "" {
		name = "image" + extension(photo.MIME)
	}
	content := ""
	if parts := Messages(caption); len(parts) > 0 {
		content = parts[0]
	}
	m, err := c.sess.ChannelMessageSendComplex(ch, &discordgo.MessageSend{Content: content, AllowedMentions: noPings,
		Files: []*discordgo.File{{Name: name, ContentType: photo.MIME, Reader: bytes.NewReader(photo.Data)}}}, discordgo.WithContext(ctx))
	if err != nil {
		return channels.SendResult{}, fmt.Errorf("discord: send image to %s: %w", chatID, classify(err))
	}
	return channels.SendResult{PlatformIDs: []string{m.ID}, Chunks: 1}, nil
}

func extension(mime string) string {
	switch mime {
	case "image/jpeg":
		return ".jpg"
	case "image/gif":
		return ".gif"
	case "image/webp":
		return ".webp"
	}
	return ".png"
}

// Discord's JSON error codes that mean the recipient cannot be reached.
const (
	codeUnknownChannel   = 10003
	codeUnknownUser      = 10013
	codeMissingAccess    = 50001
	codeCannotDM         = 50007
	codeMissingPermssion = 50013
)

// classify wraps a REST failure in its delivery class.
func classify(err error) error {
	var re *discordgo.RESTError
	if !errors.As(err, &re) || re.Response == nil {
		return err
	}
	code := 0
	if re.Message != nil {
		code = re.Message.Code
	}
	switch {
	case code == codeCannotDM || code == codeMissingAccess || code == codeMissingPermssion || code == codeUnknownUser ||
		code == codeUnknownChannel || re.Response.StatusCode == http.StatusForbidden:
		return fmt.Errorf("%w: %w", channels.ErrBlocked, err)
	case re.Response.StatusCode == http.StatusUnauthorized:
		return fmt.Errorf("%w: the token was refused: %w", channels.ErrNotConnected, err)
	case re.Response.StatusCode == http.StatusBadRequest || re.Response.StatusCode == http.StatusNotFound ||
		re.Response.StatusCode == http.StatusRequestEntityTooLarge:
		return fmt.Errorf("%w: %w", channels.ErrRejected, err)
	}
	return err
}
