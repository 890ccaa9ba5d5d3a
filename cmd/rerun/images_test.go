package rerun

import (
	"context"
	"errors"
	"testing"

	"github.com/omega-gateway/omega/channels"
	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/domain/turn"
	"github.com/omega-gateway/omega/handlers/workspace"
)

// A re-run answers the driver's workspace questions and the photo sends
// as the recorded turn went, so the same decisions produce the same events.
func TestReplayedImagesAnswerAsRecorded(t *testing.T) {
	ctx := context.Background()
	a := turn.WorkspaceImage{Path: "a.png", Size: 1, SHA256: "aa"}
	b := turn.WorkspaceImage{Path: "b.png", Size: 1, SHA256: "bb"}
	c := turn.WorkspaceImage{Path: "c.png", Size: 1, SHA256: "cc"}
	d := turn.WorkspaceImage{Path: "d.png", Size: 1, SHA256: "dd"}
	decoded := []domain.Payload{
		turn.WorkspaceImagesSnapshotted{Dir: "/live", Images: []turn.WorkspaceImage{{Path: "old.png"}}},
		turn.WorkspaceImagesFound{Images: []turn.WorkspaceImage{a, b, c, d}},
		turn.WorkspaceImageSent{Path: "a.png"},
		turn.WorkspaceImageFailed{Path: "b.png", Class: "changed", Error: "b.png: changed"},
		turn.WorkspaceImageFailed{Path: "c.png", Class: "blocked", Error: "bot was blocked"},
		turn.WorkspaceImageFailed{Path: "d.png", Class: "unreadable", Error: "permission denied"},
	}
	r := recordedImages(decoded, false)
	if before, err := r.Snapshot(ctx, "/scratch"); err != nil || len(before) != 1 || before[0].Path != "old.png" {
		t.Fatalf("Snapshot = %v, %v", before, err)
	}
	if found, _ := r.Find(ctx, "/scratch", nil, nil); len(found.Images) != 4 {
		t.Fatalf("Find = %+v", found)
	}
	if _, err := r.Read(ctx, "/scratch", a); err != nil {
		t.Errorf("Read a: %v", err)
	}
	if _, err := r.Read(ctx, "/scratch", b); !errors.Is(err, workspace.ErrChanged) {
		t.Errorf("Read b: %v, want changed", err)
	}
	if _, err := r.Read(ctx, "/scratch", d); err == nil || err.Error() != "permission denied" {
		t.Errorf("Read d: %v", err)
	}
	outcomes := photoOutcomes(decoded)
	if len(outcomes) != 2 || outcomes[0] != nil || !errors.Is(outcomes[1], channels.ErrBlocked) || outcomes[1].Error() != "bot was blocked" {
		t.Fatalf("photo outcomes %v, want sent then blocked", outcomes)
	}

	// A turn recorded before images were watched re-runs without a snapshot.
	if _, err := recordedImages(nil, false).Snapshot(ctx, "/scratch"); err == nil {
		t.Error("a turn without a recorded snapshot got one in its re-run")
	}
}
