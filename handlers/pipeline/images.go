package pipeline

import (
	"context"
	"log/slog"

	"github.com/omega-gateway/omega/channels"
	"github.com/omega-gateway/omega/domain/sender"
	"github.com/omega-gateway/omega/domain/turn"
	"github.com/omega-gateway/omega/handlers/pipeline/images"
)

// WorkspaceImages finds the images a turn's provider made in its working
// directory and reads them for sending (see images.Files).
type WorkspaceImages = images.Files

// snapshotImages adds the workspace's images as they are before the
// provider is called, in the provider's working directory (the
// configured workspace, which the snapshot does not name: see
// images.Dir). Without a snapshot the turn sends no images.
func (d *Driver) snapshotImages(ctx context.Context, st *turnState, log *slog.Logger) {
	dir := d.Config.Workspace
	if dir == "" || !d.showsImages(st.Received.Channel) {
		return
	}
	imgs, err := d.photos.Snapshot(ctx, dir)
	if err != nil {
		log.Warn("workspace images not watched this turn", "dir", dir, "err", err)
		return
	}
	st.add(turn.WorkspaceImagesSnapshotted{Images: imgs})
}

// sendImages does the next thing the turn's workspace images need: find
// them and record the intent, or send the next one and record how it went.
// A send is on record as soon as it is done, so a resumed turn sends only
// the images without an outcome.
func (d *Driver) sendImages(ctx context.Context, st *turnState, _ sender.SenderProfile, log *slog.Logger) error {
	dir := images.Dir(st.Images.Before, d.Config.Workspace)
	if st.Images.Found == nil {
		// When there are none nothing is recorded (TurnImages.FoundNone),
		// which spares every turn that made no image an event.
		found := d.photos.Find(ctx, log, dir, st.Images.Before.Images, st.Received.Attachments)
		if len(found.Images) == 0 && len(found.Skipped) == 0 {
			st.Images.FoundNone()
			return nil
		}
		return d.record(ctx, st, found)
	}
	img, _ := st.Images.NextImage()
	e, outcome, err := d.photos.Send(ctx, log, d.chat(st).Photo, dir, img)
	switch {
	case err != nil:
		return err
	case outcome:
		return d.recordOutcome(ctx, st, e)
	}
	return d.record(ctx, st, e)
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
