package telegram

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"path"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/mymmrac/telego"

	"github.com/omega-gateway/omega/channels"
)

// Notes used as message text when media could not be turned into text.
// The pipeline can compare Incoming.Text with them to tell the user.
const (
	NoteVoiceNotConfigured = "[voice message: transcription is not configured]"
	NoteVoiceFailed        = "[voice message: transcription failed]"
	NotePhotoFailed        = "[photo: download failed]"
)

const (
	// MaxTextLen bounds inbound text (in characters); longer texts are
	// truncated, with a log line.
	MaxTextLen = 100_000
	// maxDownload is above the Bot API's 20 MB download limit.
	maxDownload = 25 << 20
)

// toIncoming maps an update to a message. ok is false for updates that
// are skipped on purpose (unknown types, malformed JSON, group messages
// not addressed to the bot). err is a transient failure worth retrying;
// when degraded, media failures become notes instead of errors.
func (c *Channel) toIncoming(ctx context.Context, raw json.RawMessage, degraded bool) (in channels.Incoming, ok bool, err error) {
	var u telego.Update
	if err := json.Unmarshal(raw, &u); err != nil {
		c.log.Warn("telegram malformed update skipped", "update_id", u.UpdateID, "err", err)
		return in, false, nil
	}
	msg := u.Message
	if msg == nil {
		c.log.Debug("telegram update type ignored", "update_id", u.UpdateID)
		return in, false, nil
	}
	if msg.From == nil || msg.Chat.Type == telego.ChatTypeChannel {
		c.log.Debug("telegram message without a user sender ignored", "update_id", u.UpdateID)
		return in, false, nil
	}
	isGroup := msg.Chat.Type == telego.ChatTypeGroup || msg.Chat.Type == telego.ChatTypeSupergroup
	mentioned := c.mentioned(msg)
	if isGroup && c.cfg.GroupMode == GroupModeMention && !mentioned {
		c.log.Debug("telegram group message without mention skipped", "update_id", u.UpdateID)
		return in, false, nil
	}

	in = channels.Incoming{
		Channel:    Name,
		SenderID:   strconv.FormatInt(msg.From.ID, 10),
		SenderName: senderName(msg.From),
		ChatID:     strconv.FormatInt(msg.Chat.ID, 10),
		Text:       firstNonEmpty(msg.Text, msg.Caption),
		PlatformID: strconv.FormatInt(msg.Chat.ID, 10) + ":" + strconv.Itoa(msg.MessageID),
		IsGroup:    isGroup,
		Mentioned:  mentioned,
		ReceivedAt: time.Now(),
	}
	if msg.Date > 0 {
		in.ReceivedAt = time.Unix(msg.Date, 0)
	}
	if err := c.addMedia(ctx, msg, &in, degraded); err != nil {
		return in, false, err
	}
	in.Text = c.truncate(in.Text, u.UpdateID)
	return in, true, nil
}

func (c *Channel) addMedia(ctx context.Context, msg *telego.Message, in *channels.Incoming, degraded bool) error {
	if len(msg.Photo) > 0 {
		att, err := c.downloadPhoto(ctx, msg.Photo)
		switch {
		case err == nil:
			in.Attachments = append(in.Attachments, att)
		case !degraded:
			return fmt.Errorf("photo: %w", err)
		default:
			c.log.Warn("telegram photo dropped", "chat", in.ChatID, "err", err)
			in.Text = joinText(NotePhotoFailed, in.Text)
		}
	}
	fileID, name := audioFile(msg)
	if fileID == "" {
		return nil
	}
	if c.transcriber == nil {
		in.Text = joinText(NoteVoiceNotConfigured, in.Text)
		return nil
	}
	transcript, err := c.transcribeFile(ctx, fileID, name)
	switch {
	case err == nil:
		in.Text = joinText(transcript, in.Text)
	case !degraded:
		return fmt.Errorf("voice: %w", err)
	default:
		c.log.Warn("telegram voice not transcribed", "chat", in.ChatID, "err", err)
		in.Text = joinText(NoteVoiceFailed, in.Text)
	}
	return nil
}

func audioFile(msg *telego.Message) (fileID, name string) {
	switch {
	case msg.Voice != nil:
		return msg.Voice.FileID, "voice.ogg"
	case msg.Audio != nil:
		name = msg.Audio.FileName
		if name == "" {
			name = "audio.mp3"
		}
		return msg.Audio.FileID, name
	}
	return "", ""
}

func (c *Channel) transcribeFile(ctx context.Context, fileID, name string) (string, error) {
	data, _, err := c.download(ctx, fileID)
	if err != nil {
		return "", err
	}
	ctx, cancel := context.WithTimeout(ctx, downloadTimeout)
	defer cancel()
	return c.transcriber.Transcribe(ctx, name, data)
}

func (c *Channel) downloadPhoto(ctx context.Context, sizes []telego.PhotoSize) (channels.Attachment, error) {
	best := sizes[0]
	for _, s := range sizes[1:] {
		if s.Width*s.Height > best.Width*best.Height {
			best = s
		}
	}
	data, filePath, err := c.download(ctx, best.FileID)
	if err != nil {
		return channels.Attachment{}, err
	}
	name := path.Base(filePath)
	if name == "." || name == "/" || name == "" {
		name = best.FileUniqueID + ".jpg"
	}
	return channels.Attachment{Name: name, MIME: "image/jpeg", Data: data}, nil
}

// download fetches a file through getFile and the file download URL.
func (c *Channel) download(ctx context.Context, fileID string) ([]byte, string, error) {
	ctx, cancel := context.WithTimeout(ctx, downloadTimeout)
	defer cancel()
	f, err := c.bot.GetFile(ctx, &telego.GetFileParams{FileID: fileID})
	if err != nil {
		return nil, "", fmt.Errorf("getFile: %w", c.redact(err))
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.bot.FileDownloadURL(f.FilePath), nil)
	if err != nil {
		return nil, "", fmt.Errorf("download request: %w", c.redact(err))
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, "", fmt.Errorf("download: %w", c.redact(err))
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		return nil, "", fmt.Errorf("download: status %d", resp.StatusCode)
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxDownload+1))
	if err != nil {
		return nil, "", fmt.Errorf("download body: %w", c.redact(err))
	}
	if len(data) > maxDownload {
		return nil, "", fmt.Errorf("download: file larger than %d bytes", maxDownload)
	}
	return data, f.FilePath, nil
}

// mentioned reports whether the message addresses the bot: an @mention
// (also /command@bot) or a reply to one of the bot's messages.
func (c *Channel) mentioned(msg *telego.Message) bool {
	botID, username := c.identity()
	if r := msg.ReplyToMessage; r != nil && r.From != nil && botID != 0 && r.From.ID == botID {
		return true
	}
	if username == "" {
		return false
	}
	return containsMention(msg.Text, username) || containsMention(msg.Caption, username)
}

func containsMention(text, username string) bool {
	lower := strings.ToLower(text)
	want := "@" + strings.ToLower(username)
	for i := 0; ; {
		j := strings.Index(lower[i:], want)
		if j < 0 {
			return false
		}
		end := i + j + len(want)
		if end == len(lower) || !isWordByte(lower[end]) {
			return true
		}
		i = end
	}
}

func senderName(u *telego.User) string {
	name := strings.TrimSpace(u.FirstName + " " + u.LastName)
	if name == "" {
		name = u.Username
	}
	return name
}

func (c *Channel) truncate(text string, updateID int) string {
	if utf8.RuneCountInString(text) <= MaxTextLen {
		return text
	}
	c.log.Warn("telegram message text truncated", "update_id", updateID, "limit", MaxTextLen)
	n := 0
	for i := range text {
		if n == MaxTextLen {
			return text[:i]
		}
		n++
	}
	return text
}

func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func joinText(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + "\n\n" + b
}

// isWordByte reports whether c may continue a username (any non-ASCII
// byte counts, so a mention glued to a word in another script is not one).
func isWordByte(c byte) bool {
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80
}
