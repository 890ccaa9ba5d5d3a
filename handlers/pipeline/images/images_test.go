package images

import (
	"context"
	"io"
	"log/slog"
	"testing"

	"github.com/omega-gateway/omega/channels"
	"github.com/omega-gateway/omega/domain/turn"
	"github.com/omega-gateway/omega/handlers/workspace"
)

type files struct {
	Files
	readErr error
}

func (f files) Read(context.Context, string, turn.WorkspaceImage) ([]byte, error) {
	return []byte("png"), f.readErr
}

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

func sender(t *testing.T, f Files) *Sender {
	t.Helper()
	s, err := New(f, func(err error) string { return err.Error() })
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func photoSend(sendErr error) PhotoSend {
	return func(context.Context, channels.Attachment) (channels.SendResult, error) {
		return channels.SendResult{PlatformIDs: []string{"m1"}}, sendErr
	}
}

// An image that changed is not sent and says why, not as a send's
// outcome; a refused send is one; a sent image carries its message.
func TestSendRecordsHowItWent(t *testing.T) {
	img := turn.WorkspaceImage{Path: "/w/chart.png", Size: 3}
	ctx := context.Background()
	e, outcome, err := sender(t, files{readErr: workspace.ErrChanged}).Send(ctx, quiet, photoSend(nil), "/w", img)
	if f, ok := e.(turn.WorkspaceImageFailed); err != nil || outcome || !ok || f.Class != "changed" {
		t.Errorf("changed image: %#v, outcome %v, %v", e, outcome, err)
	}
	e, outcome, err = sender(t, files{}).Send(ctx, quiet, photoSend(channels.ErrBlocked), "/w", img)
	if _, ok := e.(turn.WorkspaceImageFailed); err != nil || !outcome || !ok {
		t.Errorf("refused send: %#v, outcome %v, %v", e, outcome, err)
	}
	e, outcome, err = sender(t, files{}).Send(ctx, quiet, photoSend(nil), "/w", img)
	if s, ok := e.(turn.WorkspaceImageSent); err != nil || !outcome || !ok || len(s.PlatformIDs) != 1 {
		t.Errorf("sent image: %#v, outcome %v, %v", e, outcome, err)
	}
	if _, err := New(nil, nil); err == nil {
		t.Error("a sender without files was made")
	}
}
