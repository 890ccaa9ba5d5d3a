package signal

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/omega-gateway/omega/channels"
)

// received is a receive event's data: the envelope as signal-cli writes
// it (JsonMessageEnvelope).
type received struct {
	Envelope envelope `json:"envelope"`
	Account  string   `json:"account"`
}

type envelope struct {
	Source       string       `json:"source"`
	SourceNumber string       `json:"sourceNumber"`
	SourceUUID   string       `json:"sourceUuid"`
	SourceName   string       `json:"sourceName"`
	Timestamp    int64        `json:"timestamp"`
	DataMessage  *dataMessage `json:"dataMessage"`
}

type dataMessage struct {
	Timestamp   int64        `json:"timestamp"`
	Message     string       `json:"message"`
	Attachments []attachment `json:"attachments"`
	Mentions    []mention    `json:"mentions"`
	Quote       *quote       `json:"quote"`
	GroupInfo   *groupInfo   `json:"groupInfo"`
}

type attachment struct {
	ContentType string `json:"contentType"`
	Filename    string `json:"filename"`
	ID          string `json:"id"`
	Size        int64  `json:"size"`
}

type mention struct {
	Name   string `json:"name"`
	Number string `json:"number"`
	UUID   string `json:"uuid"`
	Start  int    `json:"start"`
	Length int    `json:"length"`
}

type quote struct {
	AuthorNumber string `json:"authorNumber"`
	Author       string `json:"author"`
}

type groupInfo struct {
	GroupID string `json:"groupId"`
}

// groupPrefix marks a group's chat id ("group:<base64 group id>").
const groupPrefix = "group:"

// maxAttachment is the largest attachment omega fetches.
const maxAttachment = 20 << 20

// incoming is the envelope as the pipeline's message, or why it is not
// one (receipts, typing, sync messages, its own, unmentioned group talk).
func (c *Channel) incoming(e envelope) (channels.Incoming, string) {
	dm := e.DataMessage
	sender := strings.ToLower(first(e.SourceNumber, e.Source, e.SourceUUID))
	switch {
	case dm == nil:
		return channels.Incoming{}, "no data message"
	case sender == "" || sender == c.cfg.Account:
		return channels.Incoming{}, "sent by omega's own account"
	case strings.TrimSpace(dm.Message) == "" && len(dm.Attachments) == 0:
		return channels.Incoming{}, "empty message"
	case c.cfg.Catchup > 0 && c.now().Sub(time.UnixMilli(e.Timestamp)) > c.cfg.Catchup:
		return channels.Incoming{}, "older than SIGNAL_CATCHUP"
	}
	in := channels.Incoming{
		Channel: Name, SenderID: sender, SenderName: first(e.SourceName, sender), ChatID: sender,
		Text: c.text(dm), PlatformID: sender + ":" + strconv.FormatInt(e.Timestamp, 10), ReceivedAt: c.now(),
	}
	if dm.GroupInfo != nil && dm.GroupInfo.GroupID != "" {
		in.IsGroup, in.ChatID = true, groupPrefix+dm.GroupInfo.GroupID
		in.Mentioned = c.mentioned(dm)
		if !in.Mentioned {
			return channels.Incoming{}, "not mentioned or replied to in a group"
		}
	}
	return in, ""
}

func (c *Channel) mentioned(dm *dataMessage) bool {
	for _, m := range dm.Mentions {
		if m.Number == c.cfg.Account {
			return true
		}
	}
	return dm.Quote != nil && first(dm.Quote.AuthorNumber, dm.Quote.Author) == c.cfg.Account
}

// text is the message with each mention (U+FFFC) written as @name, and
// omega's own dropped.
func (c *Channel) text(dm *dataMessage) string {
	var b strings.Builder
	i := 0
	for _, r := range dm.Message {
		if r != '\uFFFC' {
			b.WriteRune(r)
			continue
		}
		if i < len(dm.Mentions) {
			if m := dm.Mentions[i]; m.Number != c.cfg.Account {
				b.WriteString("@" + first(m.Name, m.Number, m.UUID))
			}
		}
		i++
	}
	return strings.TrimSpace(strings.ReplaceAll(b.String(), "  ", " "))
}

// attachments fetches the message's files from the daemon (getAttachment).
func (c *Channel) attachments(ctx context.Context, e envelope) ([]channels.Attachment, error) {
	var out []channels.Attachment
	for _, a := range e.DataMessage.Attachments {
		if a.Size > maxAttachment {
			c.log.Warn("signal: attachment too large, not fetched", "id", a.ID, "bytes", a.Size)
			continue
		}
		params := map[string]any{"id": a.ID}
		if g := e.DataMessage.GroupInfo; g != nil && g.GroupID != "" {
			params["groupId"] = g.GroupID
		} else {
			params["recipient"] = first(e.SourceNumber, e.Source, e.SourceUUID)
		}
		var res struct {
			Data string `json:"data"`
		}
		err := c.rpc.call(ctx, "getAttachment", params, &res)
		var re *rpcError
		if errors.As(err, &re) && re.Code == -1 {
			// The daemon no longer has it: the message goes without it
			// rather than blocking the stream.
			c.log.Warn("signal: attachment not available, message delivered without it", "id", a.ID, "err", err)
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("fetch attachment %s: %w", a.ID, err)
		}
		data, err := base64.StdEncoding.DecodeString(res.Data)
		if err != nil {
			return nil, fmt.Errorf("attachment %s: %w", a.ID, err)
		}
		name := path.Base(a.Filename)
		if a.Filename == "" || name == "." || name == "/" {
			name = a.ID
		}
		out = append(out, channels.Attachment{Name: name, MIME: a.ContentType, Data: data})
	}
	return out, nil
}

func first(s ...string) string {
	for _, x := range s {
		if x != "" {
			return x
		}
	}
	return ""
}
