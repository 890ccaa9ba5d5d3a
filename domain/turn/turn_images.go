package turn

import "github.com/omega-gateway/omega/domain"

// Workspace images: pictures the provider creates or changes in its
// workspace during a turn are sent to the user after the reply. The turn
// records what the workspace held before the provider call, then which
// images it is about to send (the intent), then each send's outcome, so a
// turn that crashed sends exactly the images it has no outcome for. A
// turn that finds nothing to send or skip records no finding: its
// completion follows, and a completed turn without one found nothing.

// WorkspaceImage is one image file of the workspace: its path relative to
// the workspace, its size and modification time (unix nanoseconds) and,
// once it is to be sent, its SHA-256.
type WorkspaceImage struct {
	Path    string `json:"path"`
	Size    int64  `json:"size"`
	ModTime int64  `json:"mod_time,omitempty"`
	SHA256  string `json:"sha256,omitempty"`
}

// SkippedImage is a new image that is not sent, and why (too large, over
// the per-turn count, the user's own image, unreadable).
type SkippedImage struct {
	Path   string `json:"path"`
	Size   int64  `json:"size"`
	Reason string `json:"reason"`
}

// Reasons an image is skipped.
const (
	ImageSkipTooLarge = "too_large"
	ImageSkipTooMany  = "too_many"
	ImageSkipInbound  = "sent_by_user"
	ImageSkipUnread   = "unreadable"
)

type (
	// WorkspaceImagesSnapshotted records the images in the provider's
	// working directory before the turn's provider call. The directory
	// is the configured workspace; Dir names it only in snapshots
	// recorded before it was left out.
	WorkspaceImagesSnapshotted struct {
		Dir    string           `json:"dir,omitempty"`
		Images []WorkspaceImage `json:"images,omitempty"`
	}
	// WorkspaceImagesFound records the images new or changed since the
	// snapshot that the turn will send (in order), and the ones it skips.
	// It is on record before the first is sent; when it would list
	// nothing it is not recorded (see TurnImages.FoundNone).
	WorkspaceImagesFound struct {
		Images  []WorkspaceImage `json:"images,omitempty"`
		Skipped []SkippedImage   `json:"skipped,omitempty"`
	}
	// WorkspaceImageSent records one image delivered to the user.
	WorkspaceImageSent struct {
		Path        string   `json:"path"`
		SHA256      string   `json:"sha256"`
		Size        int64    `json:"size"`
		PlatformIDs []string `json:"platform_ids,omitempty"`
	}
	// WorkspaceImageFailed records one image that could not be delivered
	// (or had changed or vanished before it could be); it is not retried.
	WorkspaceImageFailed struct {
		Path string `json:"path"`
		// Class: changed or unreadable (the file), else the delivery
		// failure's class (blocked, rejected, not_connected, no_channel, error).
		Class string `json:"class"`
		Error string `json:"error"`
	}
)

func (WorkspaceImagesSnapshotted) EventType() string { return "WorkspaceImagesSnapshotted" }
func (WorkspaceImagesFound) EventType() string       { return "WorkspaceImagesFound" }
func (WorkspaceImageSent) EventType() string         { return "WorkspaceImageSent" }
func (WorkspaceImageFailed) EventType() string       { return "WorkspaceImageFailed" }

// registerImageEvents adds the workspace image events to a registry.
func registerImageEvents(r *domain.Registry) {
	for _, p := range []domain.Payload{WorkspaceImagesSnapshotted{}, WorkspaceImagesFound{}, WorkspaceImageSent{}, WorkspaceImageFailed{}} {
		r.Register(p, 1)
	}
}

// TurnImages is the workspace-image part of a turn's state.
type TurnImages struct {
	Before *WorkspaceImagesSnapshotted
	Found  *WorkspaceImagesFound
	// Done holds the paths with an outcome (sent or failed).
	Done map[string]bool
	Sent []WorkspaceImageSent
	// Undelivered are the images the channel failed to deliver (not the
	// files that changed or could not be read): the user is missing part
	// of the reply, so the turn is undelivered, not ok.
	Undelivered []WorkspaceImageFailed
}

// fileFailures are the WorkspaceImageFailed classes about the file, not
// its delivery.
var fileFailures = map[string]bool{"changed": true, "unreadable": true}

// applyImages folds the image events; false when p is not one of them.
func (t *Turn) applyImages(p domain.Payload) bool {
	switch e := p.(type) {
	case WorkspaceImagesSnapshotted:
		t.Images.Before = &e
	case WorkspaceImagesFound:
		t.Images.Found = &e
	case WorkspaceImageSent:
		t.Images.done(e.Path)
		t.Images.Sent = append(t.Images.Sent, e)
	case WorkspaceImageFailed:
		t.Images.done(e.Path)
		if !fileFailures[e.Class] {
			t.Images.Undelivered = append(t.Images.Undelivered, e)
		}
	default:
		return false
	}
	return true
}

func (ti *TurnImages) done(path string) {
	if ti.Done == nil {
		ti.Done = map[string]bool{}
	}
	ti.Done[path] = true
}

// FoundNone notes that the turn found no image to send or skip. It is
// not recorded: the turn completes next, and a completed turn without a
// finding found nothing; one that ends before its completion is on record
// looks again when it resumes, as if it had ended before finding.
func (ti *TurnImages) FoundNone() { ti.Found = &WorkspaceImagesFound{} }

// NextImage is the next image found that has no outcome yet.
func (ti *TurnImages) NextImage() (WorkspaceImage, bool) {
	if ti.Found == nil {
		return WorkspaceImage{}, false
	}
	for _, img := range ti.Found.Images {
		if !ti.Done[img.Path] {
			return img, true
		}
	}
	return WorkspaceImage{}, false
}

// imagesDue reports whether workspace images remain to be found or sent:
// only for a turn whose provider was called after a snapshot and whose
// reply reached the user (a suppressed or undelivered turn sends none).
func (t *Turn) imagesDue() bool {
	if t.Images.Before == nil || t.Suppressed || t.SendFailed != nil || t.Denied {
		return false
	}
	if t.Images.Found == nil {
		return true
	}
	_, ok := t.Images.NextImage()
	return ok
}
