package rerun

import (
	"context"
	"errors"
	"fmt"

	"github.com/omega-gateway/omega/channels"
	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/domain/turn"
	"github.com/omega-gateway/omega/handlers/workspace"
)

// replayImages answers the driver's workspace questions with the turn's
// recorded values: the scratch workspace is empty and the replayed
// provider draws nothing. Live, the images the provider makes in the
// scratch workspace are found on disk (compared with the recorded
// snapshot). Either way nothing is sent: the scratch channel sends nothing.
type replayImages struct {
	live    bool
	watched bool // the turn recorded a snapshot
	before  []turn.WorkspaceImage
	found   turn.WorkspaceImagesFound
	readErr map[string]error // images whose recorded read failed
}

func recordedImages(decoded []domain.Payload, live bool) *replayImages {
	r := &replayImages{live: live, readErr: map[string]error{}}
	for _, p := range decoded {
		switch ev := p.(type) {
		case turn.WorkspaceImagesSnapshotted:
			r.watched, r.before = true, ev.Images
		case turn.WorkspaceImagesFound:
			r.found = ev
		case turn.WorkspaceImageFailed:
			switch ev.Class {
			case "changed":
				r.readErr[ev.Path] = fmt.Errorf("%s: %w", ev.Path, workspace.ErrChanged)
			case "unreadable":
				r.readErr[ev.Path] = errors.New(ev.Error)
			}
		}
	}
	return r
}

// errNotWatched: a turn recorded before images were watched (or whose
// snapshot failed) re-runs without one too.
var errNotWatched = errors.New("re-run: the recorded turn has no workspace snapshot")

func (r *replayImages) Snapshot(context.Context, string) ([]turn.WorkspaceImage, error) {
	if !r.watched {
		return nil, errNotWatched
	}
	return r.before, nil
}

func (r *replayImages) Find(ctx context.Context, dir string, before []turn.WorkspaceImage, inbound []turn.AttachmentRef) (turn.WorkspaceImagesFound, error) {
	if r.live {
		return workspace.Images{}.Find(ctx, dir, before, inbound)
	}
	return r.found, nil
}

func (r *replayImages) Read(ctx context.Context, dir string, img turn.WorkspaceImage) ([]byte, error) {
	if r.live {
		return workspace.Images{}.Read(ctx, dir, img)
	}
	if err, ok := r.readErr[img.Path]; ok {
		return nil, err
	}
	return []byte("re-run: " + img.Path), nil // goes nowhere
}

// photoOutcomes lists how each recorded photo send went, in order: nil
// for a sent image, the recorded failure (text and class) otherwise.
func photoOutcomes(decoded []domain.Payload) []error {
	var out []error
	for _, p := range decoded {
		switch ev := p.(type) {
		case turn.WorkspaceImageSent:
			out = append(out, nil)
		case turn.WorkspaceImageFailed:
			if ev.Class != "changed" && ev.Class != "unreadable" {
				out = append(out, &sendFailure{msg: ev.Error, class: failureClass(ev.Class)})
			}
		}
	}
	return out
}

// sendFailure reads as the recorded error and classifies as its class.
type sendFailure struct {
	msg   string
	class error
}

func (e *sendFailure) Error() string { return e.msg }
func (e *sendFailure) Unwrap() error { return e.class }

func failureClass(name string) error {
	for _, c := range []error{channels.ErrBlocked, channels.ErrRejected, channels.ErrNotConnected, channels.ErrNoChannel} {
		if channels.FailureClass(c) == name {
			return c
		}
	}
	return nil
}

// watchedImages reports whether the recorded turn watched its workspace
// for images (its channel showed them).
func watchedImages(decoded []domain.Payload) bool {
	for _, p := range decoded {
		if _, ok := p.(turn.WorkspaceImagesSnapshotted); ok {
			return true
		}
	}
	return false
}
