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

// PhotoSend sends one image to the turn's chat.
type PhotoSend func(ctx context.Context, photo channels.Attachment) (channels.SendResult, error)

// Sender finds and sends the turns' images; which chat an image goes to
// and the turn's logger are given with each call.
type Sender struct {
	files  Files
	redact func(error) string
}

// New checks a sender's collaborators: the files and the error redaction
// are required.
func New(files Files, redact func(error) string) (*Sender, error) {
	if files == nil || redact == nil {
		return nil, errors.New("images: needs the files and a redactor")
	}
	return &Sender{files: files, redact: redact}, nil
}

// Snapshot lists the images in dir before the provider call.
func (s *Sender) Snapshot(ctx context.Context, dir string) ([]turn.WorkspaceImage, error) {
	return s.files.Snapshot(ctx, dir)
}

// Find returns the images to send and the ones skipped, logging why each
// was skipped; a failed search finds what it could.
func (s *Sender) Find(ctx context.Context, log *slog.Logger, dir string, before []turn.WorkspaceImage, inbound []turn.AttachmentRef) turn.WorkspaceImagesFound {
	found, err := s.files.Find(ctx, dir, before, inbound)
	if err != nil {
		log.Warn("workspace images not found", "dir", dir, "err", err)
	}
	for _, sk := range found.Skipped {
		log.Warn("workspace image not sent", "path", sk.Path, "size", sk.Size, "reason", sk.Reason)
	}
	return found
}

// Send reads img and sends it. It returns the event that says how it
// went and whether that event is the outcome of a send (an effect outside
// omega, recorded through an outage); an error only when ctx ended.
func (s *Sender) Send(ctx context.Context, log *slog.Logger, photo PhotoSend, dir string, img turn.WorkspaceImage) (domain.Payload, bool, error) {
	data, err := s.files.Read(ctx, dir, img)
	if err != nil {
		class := "unreadable"
		if errors.Is(err, workspace.ErrChanged) {
			class = "changed"
		}
		log.Warn("workspace image not sent", "path", img.Path, "err", err)
		return turn.WorkspaceImageFailed{Path: img.Path, Class: class, Error: s.redact(err)}, false, nil
	}
	attachment := channels.Attachment{Name: filepath.Base(img.Path), MIME: workspace.MIME(img.Path), Data: data}
	res, err := photo(ctx, attachment)
	if err != nil {
		if ctx.Err() != nil {
			return nil, false, ctx.Err()
		}
		log.Warn("workspace image not delivered", "path", img.Path, "err", err)
		return turn.WorkspaceImageFailed{Path: img.Path, Class: channels.FailureClass(err), Error: s.redact(err)}, true, nil
	}
	log.Info("workspace image sent", "path", img.Path, "size", img.Size)
	return turn.WorkspaceImageSent{Path: img.Path, SHA256: img.SHA256, Size: img.Size, PlatformIDs: res.PlatformIDs}, true, nil
}

// Dir is the directory a turn's snapshot was taken in: the one it names
// (snapshots recorded before the directory was left out), else the
// configured workspace.
func Dir(before *turn.WorkspaceImagesSnapshotted, workspace string) string {
	if before.Dir != "" {
		return before.Dir
	}
	return workspace
}
