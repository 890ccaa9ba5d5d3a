package whatsapptest

import (
	"errors"
	"testing"

	"go.mau.fi/whatsmeow"
	"go.mau.fi/whatsmeow/proto/waE2E"
	"go.mau.fi/whatsmeow/types"
	"google.golang.org/protobuf/proto"
)

func TestEditsShowAsOneMessage(t *testing.T) {
	c := New()
	to := types.NewJID("4915112345678", types.DefaultUserServer)
	text := func(s string) *waE2E.Message { return &waE2E.Message{Conversation: proto.String(s)} }
	resp, err := c.SendMessage(t.Context(), to, text("draft"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.SendMessage(t.Context(), to, c.BuildEdit(to, resp.ID, text("final"))); err != nil {
		t.Fatalf("edit: %v", err)
	}
	v := c.Visible(to)
	if len(v) != 1 || v[0].Text != "final" || v[0].Edits() != 1 || v[0].History[0] != "draft" {
		t.Fatalf("visible = %+v", v)
	}
	if _, err := c.SendMessage(t.Context(), to, c.BuildEdit(to, "NOPE", text("x"))); !errors.Is(err, whatsmeow.ErrServerReturnedError) {
		t.Errorf("edit of an unknown message: %v", err)
	}
	c.RefuseEdits(true)
	if _, err := c.SendMessage(t.Context(), to, c.BuildEdit(to, resp.ID, text("again"))); !errors.Is(err, whatsmeow.ErrServerReturnedError) {
		t.Errorf("refused edit: %v", err)
	}
	if v := c.Visible(to); v[0].Text != "final" {
		t.Errorf("a refused edit changed the message: %+v", v)
	}
}
