package reports

import (
	"testing"

	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/domain/turn"
)

func TestTimelineImageSummaries(t *testing.T) {
	tests := []struct {
		p    domain.Payload
		want string
	}{
		{turn.WorkspaceImagesSnapshotted{Dir: "/ws", Images: []turn.WorkspaceImage{{Path: "a.png"}}}, "1 image(s) in /ws before the call"},
		{turn.WorkspaceImagesSnapshotted{}, "0 image(s) in the workspace before the call"},
		{turn.WorkspaceImagesFound{}, "to send: none"},
		{turn.WorkspaceImagesFound{Images: []turn.WorkspaceImage{{Path: "chart.png", Size: 12}},
			Skipped: []turn.SkippedImage{{Path: "big.png", Size: 99, Reason: turn.ImageSkipTooLarge}}},
			"to send: chart.png (12B); skipped: big.png (99B, too_large)"},
		{turn.WorkspaceImageSent{Path: "chart.png", Size: 12, SHA256: "abcdef0123456789", PlatformIDs: []string{"77"}}, "chart.png 12B sha256=abcdef01 sent as 77"},
		{turn.WorkspaceImageFailed{Path: "chart.png", Class: "blocked", Error: "403"}, "chart.png not sent: class=blocked \"403\""},
	}
	for _, tt := range tests {
		if got := describe(tt.p); got != tt.want {
			t.Errorf("%s:\n got %s\nwant %s", tt.p.EventType(), got, tt.want)
		}
	}
}
