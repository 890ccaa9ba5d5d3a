package webui

import (
	"testing"

	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/domain/turn"
)

func TestDescribeWorkspaceImages(t *testing.T) {
	tests := []struct {
		p           domain.Payload
		class, want string
	}{
		{turn.WorkspaceImagesSnapshotted{Images: []turn.WorkspaceImage{{Path: "a.png"}}}, "other", "workspace: 1 image(s) before the call"},
		{turn.WorkspaceImagesFound{Images: []turn.WorkspaceImage{{Path: "chart.png"}},
			Skipped: []turn.SkippedImage{{Path: "big.png", Size: 9, Reason: turn.ImageSkipTooLarge}}},
			"reply", "1 workspace image(s) to send: chart.png; skipped big.png (9 B, too_large)"},
		{turn.WorkspaceImageSent{Path: "chart.png", Size: 12}, "reply", "image sent: chart.png (12 B)"},
		{turn.WorkspaceImageFailed{Path: "chart.png", Class: "blocked", Error: "403"}, "failed", "image not sent: chart.png: blocked, 403"},
	}
	for _, tt := range tests {
		var en timelineEntry
		describe(&en, tt.p, domain.Event{})
		if en.Class != tt.class || en.Summary != tt.want {
			t.Errorf("%s: class %q summary %q, want %q %q", tt.p.EventType(), en.Class, en.Summary, tt.class, tt.want)
		}
	}
}
