// Package images sends the images a turn's provider made in its working
// directory: it finds them against the snapshot taken before the call and
// sends them one at a time, each send's outcome its own event.
package images

import (
	"context"
	"errors"
	"log/slog"
	"path/filepath"

	"github.com/omega-gateway/omega/channels"
	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/domain/turn"
	"github.com/omega-gateway/omega/handlers/workspace"
)

// Files finds the images a turn's provider made in its working directory
// and reads them for sending (workspace.Images on the file system; a
// re-run answers with the recorded values).
type Files interface {
	// Snapshot lists the images in dir before the provider call.
	Snapshot(ctx context.Context, dir string) ([]turn.WorkspaceImage, error)
	// Find returns the images new or changed since before, to send, and
	// the ones skipped; images the user sent (inbound) are never chosen.
	Find(ctx context.Context, dir string, before []turn.WorkspaceImage, inbound []turn.AttachmentRef) (turn.WorkspaceImagesFound, error)
	// Read returns an image found, or workspace.ErrChanged when the file
	// is no longer that image.
	Read(ctx context.Context, dir string, img turn.WorkspaceImage) ([]byte, error)
}

// Sender sends one turn's images.
type Sender struct {
	files  Files
	photo  func(ctx context.Context, photo channels.Attachment) (channels.SendResult, error)
	redact func(error) string
	log    *slog.Logger
}

// New checks a sender's collaborators: the files, the photo send, the
// error redaction and the logger are all required.
func New(files Files, photo func(context.Context, channels.Attachment) (channels.SendResult, error), redact func(error) string, log *slog.Logger) (*Sender, error) {
	if files == nil || photo == nil || redact == nil || log == nil {
		return nil, errors.New("images: needs the files, a photo send, a redactor and a logger")
	}
	return &Sender{files: files, photo: photo, redact: redact, log: log}, nil
}

// Find returns the images to send and the ones skipped, logging why each
// was skipped; a failed search finds what it could.
func (s *Sender) Find(ctx context.Context, dir string, before []turn.WorkspaceImage, inbound []turn.AttachmentRef) turn.WorkspaceImagesFound {
	found, err := s.files.Find(ctx, dir, before, inbound)
	if err != nil {
		s.log.Warn("workspace images not found", "dir", dir, "err", err)
	}
	for _, sk := range found.Skipped {
		s.log.Warn("workspace image not sent", "path", sk.Path, "size", sk.Size, "reason", sk.Reason)
	}
	return found
}

// Send reads img and sends it. It returns the event that says how it
// went and whether that event is the outcome of a send (an effect outside
// omega, recorded through an outage); an error only when ctx ended.
func (s *Sender) Send(ctx context.Context, dir string, img turn.WorkspaceImage) (domain.Payload, bool, error) {
	data, err := s.files.Read(ctx, dir, img)
	if err != nil {
		class := "unreadable"
		if errors.Is(err, workspace.ErrChanged) {
			class = "changed"
		}
		s.log.Warn("workspace image not sent", "path", img.Path, "err", err)
		return turn.WorkspaceImageFailed{Path: img.Path, Class: class, Error: s.redact(err)}, false, nil
	}
	photo := channels.Attachment{Name: filepath.Base(img.Path), MIME: workspace.MIME(img.Path), Data: data}
	res, err := s.photo(ctx, photo)
	if err != nil {
		if ctx.Err() != nil {
			return nil, false, ctx.Err()
		}
		s.log.Warn("workspace image not delivered", "path", img.Path, "err", err)
		return turn.WorkspaceImageFailed{Path: img.Path, Class: channels.FailureClass(err), Error: s.redact(err)}, true, nil
	}
	s.log.Info("workspace image sent", "path", img.Path, "size", img.Size)
	return turn.WorkspaceImageSent{Path: img.Path, SHA256: img.SHA256, Size: img.Size, PlatformIDs: res.PlatformIDs}, true, nil
}
