package app_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/omega-gateway/omega/channels/telegram/telegramtest"
	"github.com/omega-gateway/omega/domain/turn"
)

// A drawn image the Bot API refuses leaves the user without part of the
// reply: the turn completes undelivered (failed in the audit), not ok.
func TestRefusedPhotoMakesTheTurnUndelivered(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			api := telegramtest.New(t, tgToken)
			vars := telegramVars(baseVars(t, b, drawingClaude(t)), api, "42")
			if err := os.MkdirAll(filepath.Join(vars["OMEGA_DATA_DIR"], "workspace"), 0o700); err != nil {
				t.Fatal(err)
			}
			n := startTelegramNode(t, vars)
			api.FailNextWith("sendPhoto", 1, 400, "Bad Request: PHOTO_INVALID_DIMENSIONS")
			id := tgTurnID(tgUser, api.PushText(tgUser, tgUser, "please DRAW a chart"))
			evs := n.waitTurn(t, id)
			if got := len(photoCalls(api, tgUser)); got != 0 {
				t.Fatalf("%d photos accepted, want the refusal", got)
			}
			if got := countType(evs, "WorkspaceImageFailed"); got != 1 {
				t.Fatalf("%d WorkspaceImageFailed: %s", got, eventTypes(evs))
			}
			done := payload[turn.TurnCompleted](t, n, evs)
			if done.Status != turn.StatusUndelivered {
				t.Fatalf("turn completed %q after its photo was refused, want %q", done.Status, turn.StatusUndelivered)
			}
		})
	}
}
