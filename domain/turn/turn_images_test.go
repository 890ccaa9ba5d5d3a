package turn

import (
	"testing"

	"github.com/omega-gateway/omega/domain"
)

func TestTurnNextWithWorkspaceImages(t *testing.T) {
	msg := MessageReceived{Channel: "http", SenderID: "1", Text: "hi"}
	withFile := MessageReceived{Channel: "http", SenderID: "1", Text: "hi", Attachments: []AttachmentRef{{Name: "a.jpg", Path: "/x/a.jpg"}}}
	answered := func(m MessageReceived, ps ...domain.Payload) []domain.Payload {
		return append([]domain.Payload{m, AccessGranted{}, ContextBuilt{}, WorkspaceImagesSnapshotted{Dir: "/w"}, ProviderCalled{},
			ProviderReplied{Text: "x"}, ReplyReady{Text: "x"}, ReplySent{Kind: "reply"}}, ps...)
	}
	a, b := WorkspaceImage{Path: "a.png"}, WorkspaceImage{Path: "b.png"}
	found := WorkspaceImagesFound{Images: []WorkspaceImage{a, b}}
	cases := []struct {
		name   string
		events []domain.Payload
		want   Step
	}{
		{"snapshot, reply not yet sent", answered(msg)[:7], StepSendReply},
		{"reply sent: find the images", answered(msg), StepSendImages},
		{"found: send the first", answered(msg, found), StepSendImages},
		{"one sent: send the next", answered(msg, found, WorkspaceImageSent{Path: "a.png"}), StepSendImages},
		{"all have an outcome", answered(msg, found, WorkspaceImageSent{Path: "a.png"}, WorkspaceImageFailed{Path: "b.png"}), StepComplete},
		{"nothing found", answered(msg, WorkspaceImagesFound{}), StepComplete},
		{"completed without a finding: found nothing", answered(msg, TurnCompleted{Status: StatusOK}), StepNone},
		{"images before the inbox is cleaned", answered(withFile), StepSendImages},
		{"then the inbox", answered(withFile, WorkspaceImagesFound{}), StepCleanup},
		{"no snapshot (recorded before images were watched)",
			[]domain.Payload{msg, AccessGranted{}, ContextBuilt{}, ProviderCalled{}, ProviderReplied{}, ReplyReady{}, ReplySent{}}, StepComplete},
		{"reply undelivered: no images", append(answered(msg)[:7], ReplyFailed{Class: "blocked"}), StepComplete},
		{"suppressed: no images", append(answered(msg)[:6], TurnSuppressed{Reason: "SILENT"}), StepComplete},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := fold(c.events...).Next(TurnEnv{SenderWelcomed: true}); got != c.want {
				t.Errorf("Next = %s, want %s", got, c.want)
			}
		})
	}
}
