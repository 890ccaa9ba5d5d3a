package reports

import (
	"fmt"
	"strings"

	"github.com/omega-gateway/omega/domain/turn"
)

// The workspace images a turn sent, one line each in `omega timeline`.
func init() {
	for _, s := range []summarizer{
		on(func(e turn.WorkspaceImagesSnapshotted) string {
			dir := e.Dir
			if dir == "" {
				dir = "the workspace"
			}
			return fmt.Sprintf("%d image(s) in %s before the call", len(e.Images), dir)
		}),
		on(func(e turn.WorkspaceImagesFound) string { return imagesFoundSummary(e) }),
		on(func(e turn.WorkspaceImageSent) string {
			return fmt.Sprintf("%s %dB sha256=%s sent as %s", e.Path, e.Size, short(e.SHA256), strings.Join(e.PlatformIDs, ","))
		}),
		on(func(e turn.WorkspaceImageFailed) string {
			return fmt.Sprintf("%s not sent: class=%s %s", e.Path, e.Class, quoted(e.Error, 120))
		}),
	} {
		summaries[s.eventType] = s.explain
	}
}

func imagesFoundSummary(e turn.WorkspaceImagesFound) string {
	send := make([]string, len(e.Images))
	for i, img := range e.Images {
		send[i] = fmt.Sprintf("%s (%dB)", img.Path, img.Size)
	}
	s := "to send: none"
	if len(send) > 0 {
		s = "to send: " + strings.Join(send, ", ")
	}
	if len(e.Skipped) > 0 {
		skipped := make([]string, len(e.Skipped))
		for i, k := range e.Skipped {
			skipped[i] = fmt.Sprintf("%s (%dB, %s)", k.Path, k.Size, k.Reason)
		}
		s += "; skipped: " + strings.Join(skipped, ", ")
	}
	return s
}
