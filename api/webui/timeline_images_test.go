package webui

import (
	"testing"

	"github.com/omega-gateway/omega/domain"
)

func TestDescribeWorkspaceImages(t *testing.T) {
	tests := []struct {
		p           domain.Payload
		class, want string
	}{
		{domain.WorkspaceImagesSnapshotted{Images: []domain.WorkspaceImage{{Path: "a.png"}}}, "other", "workspace: 1 image(s) before the call"},
		{domain.WorkspaceImagesFound{Images: []domain.WorkspaceImage{{Path: "chart.png"}},
			Skipped: []domain.SkippedImage{{Path: "big.png", Size: 9, Reason: domain.ImageSkipTooLarge}}},
			"reply", "1 workspace image(s) to send: chart.png; skipped big.png (9 B, too_large)"},
		{domain.WorkspaceImageSent{Path: "chart.png", Size: 12}, "reply", "image sent: chart.png (12 B)"},
		{domain.WorkspaceImageFailed{Path: "chart.png", Class: "blocked", Error: "403"}, "failed", "image not sent: chart.png: blocked, 403"},
	}
	for _, tt := range tests {
		var en timelineEntry
		describe(&en, tt.p, domain.Event{})
		if en.Class != tt.class || en.Summary != tt.want {
			t.Errorf("%s: class %q summary %q, want %q %q", tt.p.EventType(), en.Class, en.Summary, tt.class, tt.want)
		}
	}
}
