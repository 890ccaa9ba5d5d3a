package matrix

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/omega-gateway/omega/channels"
	"github.com/omega-gateway/omega/channels/matrix/mxapi"
)

// encryptedNotice answers a message the bot cannot read.
const encryptedNotice = "🔒 I can't read end-to-end encrypted messages. Please talk to me in a room without encryption (create a new room and leave encryption off), and invite me there."

// SendText implements channels.Channel: Markdown goes out as HTML with
// the Markdown itself as the plain-text body, in chunks of maxChunk.
func (c *Channel) SendText(ctx context.Context, chatID, text string) (channels.SendResult, error) {
	var res channels.SendResult
	chatID, err := c.chatRoom(ctx, chatID)
	if err != nil {
		return res, err
	}
	for _, part := range chunk(text, maxChunk) {
		evID, err := c.send(ctx, chatID, textMessage(part))
		if err != nil {
			return res, err
		}
		res.PlatformIDs = append(res.PlatformIDs, evID)
		res.Chunks++
	}
	return res, nil
}

// SendPhoto implements channels.Channel.
func (c *Channel) SendPhoto(ctx context.Context, chatID string, photo channels.Attachment, caption string) error {
	_, err := c.SendPhotoResult(ctx, chatID, photo, caption)
	return err
}

// SendPhotoResult implements channels.PhotoReporter: the image is
// uploaded to the homeserver's media repository and sent as m.image,
// the caption as its body (the file name then travels as filename).
func (c *Channel) SendPhotoResult(ctx context.Context, chatID string, photo channels.Attachment, caption string) (channels.SendResult, error) {
	chatID, err := c.chatRoom(ctx, chatID)
	if err != nil {
		return channels.SendResult{}, err
	}
	rctx, cancel := context.WithTimeout(ctx, c.cfg.RequestTimeout)
	defer cancel()
	uri, err := c.cli.Upload(rctx, photo.Data, photo.MIME, photo.Name)
	if err != nil {
		return channels.SendResult{}, classify("upload "+photo.Name, err)
	}
	content := &mxapi.Message{MsgType: mxapi.MsgImage, Body: photo.Name, URL: uri,
		Info: &mxapi.FileInfo{MimeType: photo.MIME, Size: len(photo.Data)}, Mentions: &mxapi.Mentions{}}
	if caption != "" {
		content.Body, content.FileName = caption, photo.Name
	}
	evID, err := c.send(ctx, chatID, content)
	if err != nil {
		return channels.SendResult{}, err
	}
	return channels.SendResult{PlatformIDs: []string{evID}, Chunks: 1}, nil
}

// SendTyping implements channels.Channel.
func (c *Channel) SendTyping(ctx context.Context, chatID string) error {
	chatID, err := c.chatRoom(ctx, chatID)
	if err != nil {
		return err
	}
	rctx, cancel := context.WithTimeout(ctx, c.cfg.RequestTimeout)
	defer cancel()
	if err := c.cli.Typing(rctx, chatID, 30*time.Second); err != nil {
		return classify("typing", err)
	}
	return nil
}

// sendAttempts bounds how often a send is tried when the homeserver
// asks to wait (429) or fails (5xx, no answer).
const sendAttempts = 3

// send sends one m.room.message, retrying what may pass.
func (c *Channel) send(ctx context.Context, chatID string, content *mxapi.Message) (string, error) {
	// One transaction id for every attempt: a retry of a send the
	// homeserver did take is not shown twice.
	txn := c.cli.NewTxn()
	var err error
	for attempt := 1; attempt <= sendAttempts; attempt++ {
		rctx, cancel := context.WithTimeout(ctx, c.cfg.RequestTimeout)
		var evID string
		evID, err = c.cli.SendMessage(rctx, chatID, txn, content)
		cancel()
		if err == nil {
			return evID, nil
		}
		err = classify("send to "+chatID, err)
		if errors.Is(err, channels.ErrBlocked) || errors.Is(err, channels.ErrRejected) || attempt == sendAttempts {
			break
		}
		if c.sleep(ctx, max(retryAfter(err), time.Duration(attempt)*time.Second)) != nil {
			break
		}
	}
	return "", err
}

// classify wraps err with the channels failure class it stands for.
func classify(what string, err error) error {
	var ae *mxapi.Error
	if !errors.As(err, &ae) {
		return fmt.Errorf("matrix: %s: %w", what, err)
	}
	switch code := ae.Status; {
	case code == http.StatusForbidden:
		return fmt.Errorf("matrix: %s: %w: %w", what, channels.ErrBlocked, err)
	case code == http.StatusTooManyRequests || code >= 500:
		return fmt.Errorf("matrix: %s: %w", what, err)
	case code >= 400:
		return fmt.Errorf("matrix: %s: %w: %w", what, channels.ErrRejected, err)
	}
	return fmt.Errorf("matrix: %s: %w", what, err)
}

// refuseEncrypted tells an allowlisted person, once per room and
// process, that the bot cannot read encrypted messages.
func (c *Channel) refuseEncrypted(ctx context.Context, roomID, sender string) {
	c.rooms.mu.Lock()
	warned := c.rooms.warned[roomID]
	c.rooms.warned[roomID] = true
	c.rooms.mu.Unlock()
	c.log.Warn("matrix: encrypted message not readable (end-to-end encryption is not supported)", "room", roomID, "sender", sender)
	if warned || !c.allowed(sender) {
		return
	}
	content := &mxapi.Message{MsgType: mxapi.MsgNotice, Body: encryptedNotice, Mentions: &mxapi.Mentions{}}
	if _, err := c.send(ctx, roomID, content); err != nil {
		c.log.Error("matrix: the encryption notice was not sent", "room", roomID, "err", err)
	}
}

// download fetches an image from the media repository.
func (c *Channel) download(ctx context.Context, msg *mxapi.Message) (channels.Attachment, error) {
	if msg.File != nil {
		return channels.Attachment{}, errors.New("encrypted media is not supported")
	}
	rctx, cancel := context.WithTimeout(ctx, c.cfg.RequestTimeout)
	defer cancel()
	data, err := c.cli.Download(rctx, msg.URL)
	if err != nil {
		return channels.Attachment{}, fmt.Errorf("download %s: %w", msg.URL, err)
	}
	att := channels.Attachment{Name: msg.FileName, Data: data}
	if att.Name == "" {
		att.Name = msg.Body
	}
	if msg.Info != nil {
		att.MIME = msg.Info.MimeType
	}
	if att.MIME == "" {
		att.MIME = http.DetectContentType(data)
	}
	if att.Name == "" || len(att.Name) > 100 {
		att.Name = "image"
	}
	return att, nil
}
