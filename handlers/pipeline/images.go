package pipeline

import (
	"context"
	"errors"
	"log/slog"
	"path/filepath"

	"github.com/omega-gateway/omega/channels"
	"github.com/omega-gateway/omega/domain/sender"
	"github.com/omega-gateway/omega/domain/turn"
	"github.com/omega-gateway/omega/handlers/workspace"
)

// WorkspaceImages finds the images a turn's provider made in its working
// directory and reads them for sending (workspace.Images on the file
// system; a re-run answers with the recorded values).
type WorkspaceImages interface {
	// Snapshot lists the images in dir before the provider call.
	Snapshot(ctx context.Context, dir string) ([]turn.WorkspaceImage, error)
	// Find returns the images new or changed since before, to send, and
	// the ones skipped; images the user sent (inbound) are never chosen.
	Find(ctx context.Context, dir string, before []turn.WorkspaceImage, inbound []turn.AttachmentRef) (turn.WorkspaceImagesFound, error)
	// Read returns an image found, or workspace.ErrChanged when the file
	// is no longer that image.
	Read(ctx context.Context, dir string, img turn.WorkspaceImage) ([]byte, error)
}

func (d *Driver) images() WorkspaceImages {
	if d.Images != nil {
		return d.Images
	}
	return workspace.Images{}
}

// snapshotImages adds the workspace's images as they are before the
// provider is called, in the provider's working directory (the
// configured workspace, which the snapshot does not name: see
// imagesDir). Without a snapshot the turn sends no images.
func (d *Driver) snapshotImages(ctx context.Context, st *turnState, log *slog.Logger) {
	dir := d.Config.Workspace
	if dir == "" || !d.showsImages(st.Received.Channel) {
		return
	}
	imgs, err := d.images().Snapshot(ctx, dir)
	if err != nil {
		log.Warn("workspace images not watched this turn", "dir", dir, "err", err)
		return
	}
	st.add(turn.WorkspaceImagesSnapshotted{Images: imgs})
}

// imagesDir is the directory the turn's snapshot was taken in: the one it
// names (snapshots recorded before the directory was left out), else the
// configured workspace.
func (d *Driver) imagesDir(before *turn.WorkspaceImagesSnapshotted) string {
	if before.Dir != "" {
		return before.Dir
	}
	return d.Config.Workspace
}

// sendImages does the next thing the turn's workspace images need: find
// them and record the intent, or send the next one and record how it went.
// A send is on record as soon as it is done, so a resumed turn sends only
// the images without an outcome.
func (d *Driver) sendImages(ctx context.Context, st *turnState, _ sender.SenderProfile, log *slog.Logger) error {
	dir := d.imagesDir(st.Images.Before)
	if st.Images.Found == nil {
		return d.findImages(ctx, st, dir, log)
	}
	img, _ := st.Images.NextImage()
	data, err := d.images().Read(ctx, dir, img)
	if err != nil {
		class := "unreadable"
		if errors.Is(err, workspace.ErrChanged) {
			class = "changed"
		}
		log.Warn("workspace image not sent", "path", img.Path, "err", err)
		return d.record(ctx, st, turn.WorkspaceImageFailed{Path: img.Path, Class: class, Error: d.Config.Redactor.Error(err)})
	}
	photo := channels.Attachment{Name: filepath.Base(img.Path), MIME: workspace.MIME(img.Path), Data: data}
	res, err := d.sendPhoto(ctx, st, photo)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		log.Warn("workspace image not delivered", "path", img.Path, "err", err)
		return d.recordOutcome(ctx, st, turn.WorkspaceImageFailed{Path: img.Path, Class: deliveryClass(err), Error: d.Config.Redactor.Error(err)})
	}
	log.Info("workspace image sent", "path", img.Path, "size", img.Size)
	return d.recordOutcome(ctx, st, turn.WorkspaceImageSent{Path: img.Path, SHA256: img.SHA256, Size: img.Size, PlatformIDs: res.PlatformIDs})
}

// findImages records the images to send and the ones skipped, before
// the first is sent; when there are none it records nothing
// (TurnImages.FoundNone), which spares every turn that made no image an
// event.
func (d *Driver) findImages(ctx context.Context, st *turnState, dir string, log *slog.Logger) error {
	found, err := d.images().Find(ctx, dir, st.Images.Before.Images, st.Received.Attachments)
	if err != nil {
		log.Warn("workspace images not found", "dir", dir, "err", err)
	}
	for _, s := range found.Skipped {
		log.Warn("workspace image not sent", "path", s.Path, "size", s.Size, "reason", s.Reason)
	}
	if len(found.Images) == 0 && len(found.Skipped) == 0 {
		st.Images.FoundNone()
		return nil
	}
	return d.record(ctx, st, found)
}

func (d *Driver) sendPhoto(ctx context.Context, st *turnState, photo channels.Attachment) (channels.SendResult, error) {
	ch, ok := d.Channels.Channel(st.Received.Channel)
	if !ok {
		return channels.SendResult{}, errNoChannel
	}
	return channels.SendPhoto(ctx, ch, st.Received.ChatID, photo, "")
}

// showsImages reports whether the turn's channel shows images (Telegram,
// WhatsApp). A channel that does not (HTTP, the terminal) would refuse
// every photo, so its turns watch no workspace and record nothing of it.
func (d *Driver) showsImages(channel string) bool {
	ch, ok := d.Channels.Channel(channel)
	if !ok {
		return false
	}
	ir, ok := ch.(channels.ImageReceiver)
	return ok && ir.ReceivesImages()
}
