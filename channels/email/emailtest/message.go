package emailtest

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/emersion/go-message/mail"
)

// Message is a delivered message as a mail client shows it.
type Message struct {
	From, Subject, MessageID, InReplyTo, References string
	AutoSubmitted                                   string
	Plain, HTML                                     string
	Files                                           []File
}

// File is an attachment.
type File struct {
	Name, MIME string
	Data       []byte
}

// Parse reads a raw message.
func Parse(t *testing.T, raw []byte) Message {
	t.Helper()
	r, err := mail.CreateReader(bytes.NewReader(raw))
	if err != nil {
		t.Fatalf("parse message: %v\n%s", err, raw)
	}
	var m Message
	h := r.Header
	m.From, m.Subject = h.Get("From"), mustText(h.Subject())
	m.MessageID, m.InReplyTo, m.References = h.Get("Message-Id"), h.Get("In-Reply-To"), h.Get("References")
	m.AutoSubmitted = h.Get("Auto-Submitted")
	for {
		p, err := r.NextPart()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("parse part: %v", err)
		}
		data, _ := io.ReadAll(p.Body)
		switch ph := p.Header.(type) {
		case *mail.InlineHeader:
			ct, _, _ := ph.ContentType()
			if ct == "text/html" {
				m.HTML = string(data)
			} else {
				m.Plain = string(data)
			}
		case *mail.AttachmentHeader:
			ct, _, _ := ph.ContentType()
			name, _ := ph.Filename()
			m.Files = append(m.Files, File{Name: name, MIME: ct, Data: data})
		}
	}
	return m
}

func mustText(s string, _ error) string { return s }

// Messages parses user's mailbox.
func (d *Dovecot) Messages(t *testing.T, user string) []Message {
	t.Helper()
	var out []Message
	for _, raw := range d.Mailbox(t, user) {
		out = append(out, Parse(t, raw))
	}
	return out
}

// Compose writes a plain-text message; extra headers ("In-Reply-To: <x>")
// go before the body.
func Compose(from, to, messageID, subject, body string, extra ...string) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "From: %s\r\nTo: %s\r\nSubject: %s\r\nMessage-ID: %s\r\nDate: Fri, 27 Nov 2026 09:00:00 +0000\r\nMIME-Version: 1.0\r\nContent-Type: text/plain; charset=utf-8\r\n", from, to, subject, messageID)
	for _, h := range extra {
		b.WriteString(h + "\r\n")
	}
	b.WriteString("\r\n" + strings.ReplaceAll(body, "\n", "\r\n"))
	return []byte(b.String())
}
