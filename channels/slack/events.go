package slack

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"path"
	"regexp"
	"strings"

	"github.com/slack-go/slack/socketmode"

	"github.com/omega-gateway/omega/channels"
)

// eventsPayload is an events_api envelope's payload: the Events API's
// outer event with the inner event omega reads.
type eventsPayload struct {
	EventID string `json:"event_id"`
	Event   event  `json:"event"`
}

// event is a message or app_mention event.
type event struct {
	Type        string `json:"type"`
	Subtype     string `json:"subtype"`
	User        string `json:"user"`
	BotID       string `json:"bot_id"`
	Text        string `json:"text"`
	TS          string `json:"ts"`
	ThreadTS    string `json:"thread_ts"`
	Channel     string `json:"channel"`
	ChannelType string `json:"channel_type"`
	Files       []file `json:"files"`
}

type file struct {
	ID                 string `json:"id"`
	Name               string `json:"name"`
	Mimetype           string `json:"mimetype"`
	Size               int64  `json:"size"`
	URLPrivate         string `json:"url_private"`
	URLPrivateDownload string `json:"url_private_download"`
}

// maxFile is the largest file omega downloads.
const maxFile = 20 << 20

// event hands an events_api envelope's message to the pipeline, or
// explains in the log why it is not for omega. It fails only when the
// message should be offered again (a download or the pipeline failed).
func (c *Channel) event(ctx context.Context, req socketmode.Request, deliver channels.Deliver) error {
	var p eventsPayload
	if err := json.Unmarshal(req.Payload, &p); err != nil {
		c.log.Warn("slack: unreadable event skipped", "envelope", req.EnvelopeID, "err", err)
		return nil
	}
	in, why := c.incoming(p.Event)
	if why != "" {
		c.log.Debug("slack: event not for the pipeline", "event", p.EventID, "type", p.Event.Type, "why", why)
		return nil
	}
	if c.seen.has(in.PlatformID) {
		// The same message as a message and an app_mention event, or
		// redelivered after a lost acknowledgement.
		return nil
	}
	in.SenderName = c.displayName(ctx, in.SenderID)
	for _, f := range p.Event.Files {
		a, err := c.download(ctx, f)
		if err != nil {
			return err
		}
		if a != nil {
			in.Attachments = append(in.Attachments, *a)
		}
	}
	if err := deliver(ctx, in); err != nil {
		return err
	}
	c.seen.add(in.PlatformID)
	return nil
}

var mention = regexp.MustCompile(`<@([UW][A-Z0-9]+)(\|[^>]*)?>`)

// incoming is the event as the pipeline's message, or why it is not one.
func (c *Channel) incoming(ev event) (channels.Incoming, string) {
	bot := c.bot()
	if why := skip(ev, bot); why != "" {
		return channels.Incoming{}, why
	}
	private := ev.Type == "message" && ev.ChannelType == "im"
	mentioned := ev.Type == "app_mention" || mentions(ev.Text, bot)
	if !private && !mentioned {
		return channels.Incoming{}, "not mentioned in a channel"
	}
	in := channels.Incoming{
		Channel: Name, SenderID: ev.User, SenderName: ev.User,
		ChatID: chatID(ev.Channel, ev.ThreadTS), Text: plain(ev.Text, bot),
		PlatformID: ev.Channel + ":" + ev.TS, IsGroup: !private, Mentioned: mentioned, ReceivedAt: c.now(),
	}
	if !private && ev.ThreadTS == "" {
		// In a channel the answer starts a thread under the question.
		in.ChatID = chatID(ev.Channel, ev.TS)
	}
	return in, ""
}

// skip says why an event is no person's new message, "" when it is one.
func skip(ev event, bot string) string {
	switch {
	case ev.Type != "message" && ev.Type != "app_mention":
		return "event type " + ev.Type
	case ev.Subtype != "" && ev.Subtype != "file_share" && ev.Subtype != "thread_broadcast":
		return "message subtype " + ev.Subtype
	case ev.BotID != "" || ev.User == "" || ev.User == bot:
		return "sent by a bot"
	case ev.Channel == "" || ev.TS == "":
		return "no channel or timestamp"
	}
	return ""
}

func mentions(text, bot string) bool {
	for _, m := range mention.FindAllStringSubmatch(text, -1) {
		if m[1] == bot {
			return true
		}
	}
	return false
}

var slackLink = regexp.MustCompile(`<((?:https?|mailto):[^|>]+)(?:\|([^>]*))?>`)

// plain is a message's mrkdwn as the model reads it: the bot's mention
// dropped, links written out, Slack's escapes undone.
func plain(text, bot string) string {
	text = mention.ReplaceAllStringFunc(text, func(m string) string {
		sub := mention.FindStringSubmatch(m)
		if sub[1] == bot {
			return ""
		}
		return "@" + sub[1]
	})
	text = slackLink.ReplaceAllStringFunc(text, func(m string) string {
		sub := slackLink.FindStringSubmatch(m)
		if sub[2] == "" || sub[2] == sub[1] {
			return sub[1]
		}
		return sub[2] + " (" + sub[1] + ")"
	})
	text = strings.NewReplacer("&lt;", "<", "&gt;", ">", "&amp;", "&").Replace(text)
	return strings.TrimSpace(strings.ReplaceAll(text, "  ", " "))
}

// download fetches a shared file with the bot token; nil for one too
// large to take.
func (c *Channel) download(ctx context.Context, f file) (*channels.Attachment, error) {
	if f.Size > maxFile {
		c.log.Warn("slack: file too large, not downloaded", "file", f.ID, "bytes", f.Size)
		return nil, nil
	}
	url := f.URLPrivateDownload
	if url == "" {
		url = f.URLPrivate
	}
	var buf bytes.Buffer
	if err := c.api.GetFileContext(ctx, url, &limited{w: &buf, n: maxFile}); err != nil {
		return nil, fmt.Errorf("download file %s: %s", f.ID, describe(err))
	}
	name := path.Base(f.Name)
	if name == "." || name == "/" {
		name = f.ID
	}
	return &channels.Attachment{Name: name, MIME: f.Mimetype, Data: buf.Bytes()}, nil
}

// limited is a writer that refuses more than n bytes.
type limited struct {
	w interface{ Write([]byte) (int, error) }
	n int64
}

func (l *limited) Write(p []byte) (int, error) {
	if int64(len(p)) > l.n {
		return 0, fmt.Errorf("file larger than %d bytes", maxFile)
	}
	l.n -= int64(len(p))
	return l.w.Write(p)
}
