package webui

import (
	"fmt"
	"strings"

	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/domain/turn"
)

// describeImages describes the workspace images a turn found and sent.
func describeImages(en *timelineEntry, p domain.Payload) bool {
	switch ev := p.(type) {
	case turn.WorkspaceImagesSnapshotted:
		en.Class, en.Summary = "other", fmt.Sprintf("workspace: %d image(s) before the call", len(ev.Images))
	case turn.WorkspaceImagesFound:
		en.Class = "reply"
		paths := make([]string, len(ev.Images))
		for i, img := range ev.Images {
			paths[i] = img.Path
		}
		en.Summary = fmt.Sprintf("%d workspace image(s) to send", len(ev.Images))
		if len(paths) > 0 {
			en.Summary += ": " + strings.Join(paths, ", ")
		}
		for _, s := range ev.Skipped {
			en.Summary += fmt.Sprintf("; skipped %s (%d B, %s)", s.Path, s.Size, s.Reason)
		}
	case turn.WorkspaceImageSent:
		en.Class, en.Summary = "reply", fmt.Sprintf("image sent: %s (%d B)", ev.Path, ev.Size)
	case turn.WorkspaceImageFailed:
		en.Class, en.Summary = "failed", fmt.Sprintf("image not sent: %s: %s, %s", ev.Path, ev.Class, ev.Error)
	default:
		return false
	}
	return true
}
