package email

import (
	"bytes"
	"fmt"
	"html"
	"strings"
	"time"

	"github.com/emersion/go-message/mail"
	"github.com/google/uuid"

	"github.com/omega-gateway/omega/channels"
	"github.com/omega-gateway/omega/channels/markdown"
)

// newSubject heads a message that answers nothing (a heartbeat, an
// alert, a reply after a restart lost the thread).
const newSubject = "A message from omega"

// outgoing is one message to send.
type outgoing struct {
	to       string
	markdown string
	files    []channels.Attachment
}

// compose writes the message: plain text (the Markdown as written) with
// an HTML alternative, files attached, headers that thread it under the
// chat's last received message. It returns the raw message and its
// Message-ID.
func (c *Channel) compose(o outgoing, th thread, threaded bool, now time.Time) ([]byte, string, error) {
	var h mail.Header
	h.SetDate(now)
	h.SetAddressList("From", []*mail.Address{{Address: c.cfg.FromAddress()}})
	h.SetAddressList("To", []*mail.Address{{Address: o.to}})
	id := uuid.NewString() + "@" + domainOf(c.cfg.FromAddress())
	h.SetMessageID(id)
	// RFC 3834: vacation responders must not answer an automatic reply.
	h.Set("Auto-Submitted", "auto-replied")
	subject := newSubject
	if threaded {
		var inReplyTo string
		var refs []string
		subject, inReplyTo, refs = th.replyHeaders()
		if inReplyTo != "" {
			h.Set("In-Reply-To", inReplyTo)
			h.Set("References", strings.Join(refs, " "))
		}
	}
	h.SetSubject(subject)
	var buf bytes.Buffer
	if err := writeBody(&buf, h, o); err != nil {
		return nil, "", fmt.Errorf("compose: %w", err)
	}
	return buf.Bytes(), "<" + id + ">", nil
}

func writeBody(buf *bytes.Buffer, h mail.Header, o outgoing) error {
	mw, err := mail.CreateWriter(buf, h)
	if err != nil {
		return err
	}
	alt, err := mw.CreateInline()
	if err != nil {
		return err
	}
	if err := writeText(alt, "text/plain", o.markdown); err != nil {
		return err
	}
	if err := writeText(alt, "text/html", renderHTML(o.markdown)); err != nil {
		return err
	}
	if err := alt.Close(); err != nil {
		return err
	}
	for _, f := range o.files {
		var ah mail.AttachmentHeader
		ah.Set("Content-Type", f.MIME)
		ah.SetFilename(f.Name)
		ah.Set("Content-Transfer-Encoding", "base64")
		w, err := mw.CreateAttachment(ah)
		if err != nil {
			return err
		}
		if _, err := w.Write(f.Data); err != nil {
			return err
		}
		if err := w.Close(); err != nil {
			return err
		}
	}
	return mw.Close()
}

func writeText(alt *mail.InlineWriter, ct, body string) error {
	var th mail.InlineHeader
	th.Set("Content-Type", ct+"; charset=utf-8")
	th.Set("Content-Transfer-Encoding", "quoted-printable")
	w, err := alt.CreatePart(th)
	if err != nil {
		return err
	}
	if _, err := w.Write([]byte(body)); err != nil {
		return err
	}
	return w.Close()
}

func domainOf(addr string) string {
	if _, d, ok := strings.Cut(addr, "@"); ok && d != "" {
		return d
	}
	return "omega.invalid"
}

// htmlStyle renders the model's Markdown as email HTML; the renderer's
// line structure is kept by pre-wrap, so lists and paragraphs read as
// written.
var htmlStyle = markdown.Style{
	Text:   html.EscapeString,
	Bold:   markdown.Pair{Open: "<b>", Close: "</b>"},
	Italic: markdown.Pair{Open: "<i>", Close: "</i>"},
	Strike: markdown.Pair{Open: "<s>", Close: "</s>"},
	Code:   func(code string) string { return "<code>" + html.EscapeString(code) + "</code>" },
	CodeBlock: func(_, code string) string {
		return "<pre style=\"background:#f4f4f4;padding:8px\">" + html.EscapeString(code) + "</pre>"
	},
	Link:    renderLink,
	Heading: func(text string) string { return "<b style=\"font-size:1.15em\">" + text + "</b>" },
	Quote: func(body string) string {
		return "<blockquote style=\"margin:0 0 0 8px;border-left:3px solid #ccc;padding-left:8px\">" + body + "</blockquote>"
	},
	Table:  renderTable,
	Rule:   "<hr>",
	Bullet: "• ",
}

func renderHTML(md string) string {
	return "<!DOCTYPE html>\n<html><body><div style=\"white-space:pre-wrap;font-family:sans-serif\">" +
		markdown.Render(md, htmlStyle) + "</div></body></html>\n"
}

func renderLink(label, url string) string {
	lower := strings.ToLower(url)
	for _, scheme := range []string{"http://", "https://", "mailto:"} {
		if strings.HasPrefix(lower, scheme) {
			if strings.TrimSpace(label) == "" {
				label = html.EscapeString(url)
			}
			return `<a href="` + html.EscapeString(url) + `">` + label + "</a>"
		}
	}
	return label + " (" + html.EscapeString(url) + ")"
}

func renderTable(header []markdown.Cell, rows [][]markdown.Cell) string {
	var b strings.Builder
	b.WriteString(`<table style="border-collapse:collapse">`)
	row := func(cells []markdown.Cell, tag string) {
		b.WriteString("<tr>")
		for _, c := range cells {
			b.WriteString("<" + tag + ` style="border:1px solid #ccc;padding:2px 6px">` + c.Rendered + "</" + tag + ">")
		}
		b.WriteString("</tr>")
	}
	if header != nil {
		row(header, "th")
	}
	for _, r := range rows {
		row(r, "td")
	}
	b.WriteString("</table>")
	return b.String()
}
