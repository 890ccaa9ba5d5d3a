package email

import (
	"bytes"
	"errors"
	"fmt"
	"html"
	"io"
	"mime"
	"regexp"
	"strings"
	"time"

	_ "github.com/emersion/go-message/charset" // decode the charsets mail arrives in
	"github.com/emersion/go-message/mail"

	"github.com/omega-gateway/omega/channels"
)

// maxPart bounds one part read from a message (an attachment or a body).
const maxPart = 25 << 20

// message is what the channel needs from a received email.
type message struct {
	from, name string
	messageID  string
	thread     thread
	text       string
	files      []channels.Attachment
	// skip says why the message is not for the pipeline (an auto-reply,
	// a bounce, a list); empty when it is.
	skip string
}

func (m message) incoming(now time.Time) channels.Incoming {
	return channels.Incoming{
		Channel: Name, SenderID: m.from, SenderName: m.name, ChatID: m.from,
		Text: m.text, PlatformID: m.messageID, Attachments: m.files, ReceivedAt: now,
	}
}

// parse reads a raw message: its sender, its thread, its new text (quoted
// history and signature stripped) and its attachments.
func parse(raw []byte) (message, error) {
	if len(raw) == 0 {
		return message{}, errors.New("empty message")
	}
	r, err := mail.CreateReader(bytes.NewReader(raw))
	if err != nil && r == nil {
		return message{}, fmt.Errorf("read header: %w", err)
	}
	defer r.Close()
	m, err := readHeader(&r.Header)
	if err != nil {
		return message{}, err
	}
	var plain, htmlBody string
	for {
		p, err := r.NextPart()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return message{}, fmt.Errorf("read part: %w", err)
		}
		if err := m.addPart(p, &plain, &htmlBody); err != nil {
			return message{}, err
		}
	}
	text := plain
	if strings.TrimSpace(text) == "" {
		text = htmlToText(htmlBody)
	}
	m.text = stripQuoted(text)
	if m.text == "" && len(m.files) == 0 {
		m.text = strings.TrimSpace(m.thread.subject)
	}
	return m, nil
}

func readHeader(h *mail.Header) (message, error) {
	from, err := h.AddressList("From")
	if err != nil {
		return message{}, fmt.Errorf("read From: %w", err)
	}
	if len(from) == 0 {
		return message{}, errors.New("no From")
	}
	var m message
	m.from, m.name = normalize(from[0].Address), from[0].Name
	if id, err := h.MessageID(); err == nil && id != "" {
		m.messageID = "<" + id + ">"
	}
	m.thread.subject, _ = h.Subject()
	m.thread.messageID = m.messageID
	refs, _ := h.MsgIDList("References")
	if len(refs) == 0 {
		refs, _ = h.MsgIDList("In-Reply-To")
	}
	for _, r := range refs {
		m.thread.references = append(m.thread.references, "<"+r+">")
	}
	m.skip = automatic(h)
	return m, nil
}

// automatic says why a message was sent by a machine (RFC 3834
// Auto-Submitted, bulk or list precedence, a bounce); answering those
// starts mail loops.
func automatic(h *mail.Header) string {
	if v := strings.ToLower(strings.TrimSpace(h.Get("Auto-Submitted"))); v != "" && v != "no" {
		return "Auto-Submitted: " + v
	}
	switch strings.ToLower(strings.TrimSpace(h.Get("Precedence"))) {
	case "bulk", "list", "junk", "auto_reply":
		return "Precedence: " + h.Get("Precedence")
	}
	if h.Get("List-Id") != "" {
		return "a mailing list message"
	}
	if h.Get("Return-Path") == "<>" {
		return "a bounce (null sender)"
	}
	return ""
}

// addPart keeps the first plain and HTML bodies and every file.
func (m *message) addPart(p *mail.Part, plain, htmlBody *string) error {
	data, err := io.ReadAll(io.LimitReader(p.Body, maxPart))
	if err != nil {
		return fmt.Errorf("read part body: %w", err)
	}
	switch h := p.Header.(type) {
	case *mail.InlineHeader:
		ct, _, _ := h.ContentType()
		switch {
		case ct == "text/plain" && *plain == "":
			*plain = string(data)
		case ct == "text/html" && *htmlBody == "":
			*htmlBody = string(data)
		case !strings.HasPrefix(ct, "text/") && !strings.HasPrefix(ct, "multipart/"):
			// An inline image is a file the person sent all the same.
			m.files = append(m.files, channels.Attachment{Name: partName(h.Get("Content-Type"), ct, len(m.files)), MIME: ct, Data: data})
		}
	case *mail.AttachmentHeader:
		ct, _, _ := h.ContentType()
		name, _ := h.Filename()
		if name == "" {
			name = partName(h.Get("Content-Type"), ct, len(m.files))
		}
		m.files = append(m.files, channels.Attachment{Name: baseName(name), MIME: ct, Data: data})
	}
	return nil
}

func partName(contentType, ct string, i int) string {
	if _, params, err := mime.ParseMediaType(contentType); err == nil && params["name"] != "" {
		return baseName(params["name"])
	}
	ext := ".bin"
	if exts, _ := mime.ExtensionsByType(ct); len(exts) > 0 {
		ext = exts[0]
	}
	return fmt.Sprintf("attachment-%d%s", i+1, ext)
}

// baseName drops any directory a sender put in a file name.
func baseName(name string) string {
	if i := strings.LastIndexAny(name, `/\`); i >= 0 {
		name = name[i+1:]
	}
	if name == "" || name == "." || name == ".." {
		return "attachment"
	}
	return name
}

var (
	blockEnd = regexp.MustCompile(`(?i)<br\s*/?>|</(p|div|li|tr|h[1-6]|blockquote)>`)
	anyTag   = regexp.MustCompile(`(?s)<[^>]*>`)
	dropped  = regexp.MustCompile(`(?is)<(style|script|head)[^>]*>.*?</(style|script|head)>`)
	quoteTag = regexp.MustCompile(`(?is)<blockquote[^>]*>.*?</blockquote>`)
)

// htmlToText is the text of an HTML-only message, good enough for a
// turn: line breaks kept, tags and quoted blocks dropped.
func htmlToText(s string) string {
	s = dropped.ReplaceAllString(s, "")
	s = quoteTag.ReplaceAllString(s, "")
	s = blockEnd.ReplaceAllString(s, "\n")
	s = anyTag.ReplaceAllString(s, "")
	return html.UnescapeString(s)
}
