package reports

import (
	"testing"

	"github.com/omega-gateway/omega/domain"
)

func TestTimelineImageSummaries(t *testing.T) {
	tests := []struct {
		p    domain.Payload
		want string
	}{
		{domain.WorkspaceImagesSnapshotted{Dir: "/ws", Images: []domain.WorkspaceImage{{Path: "a.png"}}}, "1 image(s) in /ws before the call"},
		{domain.WorkspaceImagesSnapshotted{}, "0 image(s) in the workspace before the call"},
		{domain.WorkspaceImagesFound{}, "to send: none"},
		{domain.WorkspaceImagesFound{Images: []domain.WorkspaceImage{{Path: "chart.png", Size: 12}},
			Skipped: []domain.SkippedImage{{Path: "big.png", Size: 99, Reason: domain.ImageSkipTooLarge}}},
			"to send: chart.png (12B); skipped: big.png (99B, too_large)"},
		{domain.WorkspaceImageSent{Path: "chart.png", Size: 12, SHA256: "abcdef0123456789", PlatformIDs: []string{"77"}}, "chart.png 12B sha256=abcdef01 sent as 77"},
		{domain.WorkspaceImageFailed{Path: "chart.png", Class: "blocked", Error: "403"}, "chart.png not sent: class=blocked \"403\""},
	}
	for _, tt := range tests {
		if got := describe(tt.p); got != tt.want {
			t.Errorf("%s:\n got %s\nwant %s", tt.p.EventType(), got, tt.want)
		}
	}
}
