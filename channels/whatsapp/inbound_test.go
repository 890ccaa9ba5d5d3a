package whatsapp

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/omega-gateway/omega/channels"
	"github.com/omega-gateway/omega/domain/intake"
	"go.mau.fi/whatsmeow/proto/waE2E"
	"go.mau.fi/whatsmeow/types"
	"go.mau.fi/whatsmeow/types/events"
	"google.golang.org/protobuf/proto"
)

var (
	alice    = types.NewJID("4915112345678", types.DefaultUserServer)
	aliceLID = types.NewJID("1234567890", types.HiddenUserServer)
	group    = types.NewJID("120363000000000001", types.GroupServer)
	stamp    = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
)

// recorder is a Deliver that keeps what it was given.
type recorder struct {
	got []channels.Incoming
	err error
}

func (r *recorder) deliver(_ context.Context, in channels.Incoming) error {
	if r.err != nil {
		return r.err
	}
	r.got = append(r.got, in)
	return nil
}

// started returns a channel wired to a fake client and a recorder, as
// Start would leave it, without running the connection loop.
func started(t *testing.T, cfg Config) (*Channel, *fakeClient, *recorder) {
	t.Helper()
	fc := newFakeClient()
	c := newWithClient(cfg, fc, nil)
	rec := &recorder{}
	c.runCtx, c.deliver = t.Context(), rec.deliver
	return c, fc, rec
}

func msgEvent(id string, src types.MessageSource, m *waE2E.Message) *events.Message {
	return &events.Message{
		Info: types.MessageInfo{
			MessageSource: src,
			ID:            id,
			PushName:      "Alice",
			Timestamp:     stamp,
		},
		Message: m,
	}
}

func direct(from types.JID) types.MessageSource {
	return types.MessageSource{Chat: from, Sender: from}
}

func inGroup(from types.JID) types.MessageSource {
	return types.MessageSource{Chat: group, Sender: from, IsGroup: true}
}

func text(s string) *waE2E.Message { return &waE2E.Message{Conversation: proto.String(s)} }

func TestInboundMapping(t *testing.T) {
	fc0 := newFakeClient()
	own, ownLID := fc0.pn, fc0.lid
	selfChat := types.MessageSource{Chat: own, Sender: own, IsFromMe: true}
	toOther := types.MessageSource{Chat: alice, Sender: own, IsFromMe: true}
	lidSender := types.MessageSource{Chat: aliceLID, Sender: aliceLID, SenderAlt: alice, AddressingMode: types.AddressingModeLID}

	tests := []struct {
		name    string
		groups  bool
		evt     *events.Message
		want    *channels.Incoming // nil: not delivered
		wantAtt int
	}{
		{
			name: "conversation text",
			evt:  msgEvent("M1", direct(alice), text("hello")),
			want: &channels.Incoming{Channel: "whatsapp", SenderID: "4915112345678", SenderName: "Alice",
				ChatID: "4915112345678@s.whatsapp.net", Text: "hello", PlatformID: "M1", ReceivedAt: stamp},
		},
		{
			name: "extended text (reply)",
			evt: msgEvent("M2", direct(alice), &waE2E.Message{ExtendedTextMessage: &waE2E.ExtendedTextMessage{
				Text: proto.String("see https://x.example"), ContextInfo: &waE2E.ContextInfo{StanzaID: proto.String("OLD")}}}),
			want: &channels.Incoming{Channel: "whatsapp", SenderID: "4915112345678", SenderName: "Alice",
				ChatID: "4915112345678@s.whatsapp.net", Text: "see https://x.example", PlatformID: "M2", ReceivedAt: stamp},
		},
		{
			name: "image with caption",
			evt: msgEvent("M3", direct(alice), &waE2E.Message{ImageMessage: &waE2E.ImageMessage{
				Caption: proto.String("what is this?"), Mimetype: proto.String("image/png")}}),
			want: &channels.Incoming{Channel: "whatsapp", SenderID: "4915112345678", SenderName: "Alice",
				ChatID: "4915112345678@s.whatsapp.net", Text: "what is this?", PlatformID: "M3", ReceivedAt: stamp},
			wantAtt: 1,
		},
		{
			name: "sender addressed by LID reports the phone number",
			evt:  msgEvent("M4", lidSender, text("hi")),
			want: &channels.Incoming{Channel: "whatsapp", SenderID: "4915112345678", SenderName: "Alice",
				ChatID: "1234567890@lid", Text: "hi", PlatformID: "M4", ReceivedAt: stamp},
		},
		{
			name: "group ignored when groups are disabled",
			evt:  msgEvent("G1", inGroup(alice), text("hi all")),
		},
		{
			name:   "group without mention",
			groups: true,
			evt:    msgEvent("G2", inGroup(alice), text("hi all")),
			want: &channels.Incoming{Channel: "whatsapp", SenderID: "4915112345678", SenderName: "Alice",
				ChatID: group.String(), Text: "hi all", PlatformID: "G2", IsGroup: true, ReceivedAt: stamp},
		},
		{
			name:   "group with mention of the bot",
			groups: true,
			evt: msgEvent("G3", inGroup(alice), &waE2E.Message{ExtendedTextMessage: &waE2E.ExtendedTextMessage{
				Text:        proto.String("@15550001111 what time is it?"),
				ContextInfo: &waE2E.ContextInfo{MentionedJID: []string{"4900000@s.whatsapp.net", own.String()}}}}),
			want: &channels.Incoming{Channel: "whatsapp", SenderID: "4915112345678", SenderName: "Alice",
				ChatID: group.String(), Text: "@15550001111 what time is it?", PlatformID: "G3", IsGroup: true,
				Mentioned: true, ReceivedAt: stamp},
		},
		{
			name:   "group reply to the bot (by LID) counts as mention",
			groups: true,
			evt: msgEvent("G4", inGroup(alice), &waE2E.Message{ExtendedTextMessage: &waE2E.ExtendedTextMessage{
				Text:        proto.String("thanks"),
				ContextInfo: &waE2E.ContextInfo{Participant: proto.String(ownLID.String())}}}),
			want: &channels.Incoming{Channel: "whatsapp", SenderID: "4915112345678", SenderName: "Alice",
				ChatID: group.String(), Text: "thanks", PlatformID: "G4", IsGroup: true, Mentioned: true, ReceivedAt: stamp},
		},
		{
			name:   "group mention of someone else",
			groups: true,
			evt: msgEvent("G5", inGroup(alice), &waE2E.Message{ExtendedTextMessage: &waE2E.ExtendedTextMessage{
				Text:        proto.String("@bob"),
				ContextInfo: &waE2E.ContextInfo{MentionedJID: []string{"4900000@s.whatsapp.net"}}}}),
			want: &channels.Incoming{Channel: "whatsapp", SenderID: "4915112345678", SenderName: "Alice",
				ChatID: group.String(), Text: "@bob", PlatformID: "G5", IsGroup: true, ReceivedAt: stamp},
		},
		{
			name: "own message in the self-chat is input",
			evt:  msgEvent("S1", selfChat, text("note to self")),
			want: &channels.Incoming{Channel: "whatsapp", SenderID: "15550001111", SenderName: "Alice",
				ChatID: own.String(), Text: "note to self", PlatformID: "S1", ReceivedAt: stamp},
		},
		{
			name: "own message to someone else is ignored",
			evt:  msgEvent("S2", toOther, text("hi Alice")),
		},
		{
			name: "status broadcast is ignored",
			evt:  msgEvent("B1", types.MessageSource{Chat: types.StatusBroadcastJID, Sender: alice}, text("my status")),
		},
		{
			name: "edit of an earlier message is ignored",
			evt: func() *events.Message {
				e := msgEvent("E1", direct(alice), text("fixed typo"))
				e.IsEdit = true
				return e
			}(),
		},
		{
			name: "reaction (no text) is ignored",
			evt: msgEvent("R1", direct(alice), &waE2E.Message{ReactionMessage: &waE2E.ReactionMessage{
				Text: proto.String("👍")}}),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, fc, rec := started(t, Config{Groups: tt.groups})
			fc.download = []byte("\x89PNG")
			if ok := fc.handler(tt.evt); !ok {
				t.Fatal("handler returned false (message left unacknowledged)")
			}
			if tt.want == nil {
				if len(rec.got) != 0 {
					t.Fatalf("delivered %+v, want nothing", rec.got[0])
				}
				return
			}
			if len(rec.got) != 1 {
				t.Fatalf("delivered %d messages, want 1", len(rec.got))
			}
			got := rec.got[0]
			if len(got.Attachments) != tt.wantAtt {
				t.Fatalf("attachments = %d, want %d", len(got.Attachments), tt.wantAtt)
			}
			if tt.wantAtt > 0 {
				a := got.Attachments[0]
				if string(a.Data) != "\x89PNG" || a.MIME != "image/png" || a.Name != tt.evt.Info.ID+".png" {
					t.Errorf("attachment = %q %s %s", a.Data, a.MIME, a.Name)
				}
				got.Attachments = nil
			}
			if got.Channel != tt.want.Channel || got.SenderID != tt.want.SenderID || got.SenderName != tt.want.SenderName ||
				got.ChatID != tt.want.ChatID || got.Text != tt.want.Text || got.PlatformID != tt.want.PlatformID ||
				got.IsGroup != tt.want.IsGroup || got.Mentioned != tt.want.Mentioned || !got.ReceivedAt.Equal(tt.want.ReceivedAt) {
				t.Errorf("got  %+v\nwant %+v", got, *tt.want)
			}
		})
	}
}

func TestInboundNotAllowlistedStillDelivered(t *testing.T) {
	var cfg Config
	if err := cfg.AllowedNumbers.UnmarshalText([]byte("+1 555 000 2222")); err != nil {
		t.Fatal(err)
	}
	_, fc, rec := started(t, cfg)
	fc.handler(msgEvent("A1", direct(alice), text("let me in")))
	if len(rec.got) != 1 {
		t.Fatalf("delivered %d, want 1: authorisation is the pipeline's job", len(rec.got))
	}
}

func TestInboundImageDownloadFailure(t *testing.T) {
	_, fc, rec := started(t, Config{})
	fc.downloadErr = errors.New("media expired")
	fc.handler(msgEvent("I1", direct(alice), &waE2E.Message{ImageMessage: &waE2E.ImageMessage{Caption: proto.String("look")}}))
	if len(rec.got) != 1 {
		t.Fatalf("delivered %d, want 1", len(rec.got))
	}
	if got := rec.got[0]; len(got.Attachments) != 0 || !strings.HasPrefix(got.Text, "look\n[") {
		t.Errorf("got text %q, %d attachments", got.Text, len(got.Attachments))
	}
}

func TestInboundDedup(t *testing.T) {
	_, fc, rec := started(t, Config{})
	evt := msgEvent("D1", direct(alice), text("once"))

	rec.err = errors.New("store down")
	if fc.handler(evt) {
		t.Fatal("failed delivery acknowledged")
	}
	rec.err = nil
	for range 3 { // redelivered after reconnects
		if !fc.handler(evt) {
			t.Fatal("handler returned false")
		}
	}
	if len(rec.got) != 1 {
		t.Fatalf("delivered %d times, want 1", len(rec.got))
	}
}

func TestInboundBeforeStartIsNotAcknowledged(t *testing.T) {
	fc := newFakeClient()
	newWithClient(Config{}, fc, nil)
	if fc.handler(msgEvent("E1", direct(alice), text("early"))) {
		t.Fatal("message acknowledged with no pipeline to deliver to")
	}
}

func TestSeenSetEvictsOldest(t *testing.T) {
	s := newSeenSet(2)
	s.Add("a")
	s.Add("b")
	s.Add("a") // refreshes a
	s.Add("c") // evicts b
	for id, want := range map[string]bool{"a": true, "b": false, "c": true} {
		if got := s.Contains(id); got != want {
			t.Errorf("Contains(%s) = %v, want %v", id, got, want)
		}
	}
}

// A message refused at intake is acknowledged and skipped: redelivery
// could not help, and the messages after it still arrive.
func TestInboundRefusedAtIntakeIsAcknowledged(t *testing.T) {
	_, fc, rec := started(t, Config{})
	rec.err = fmt.Errorf("receive: %w", &intake.InvalidMessageError{Field: "text", Reason: "holds a NUL byte"})
	if !fc.handler(msgEvent("R1", direct(alice), text("bad\x00"))) {
		t.Fatal("refused message left unacknowledged: WhatsApp would redeliver it for ever")
	}
	rec.err = nil
	if !fc.handler(msgEvent("R1", direct(alice), text("bad\x00"))) || len(rec.got) != 0 {
		t.Fatalf("refused message delivered on redelivery: %+v", rec.got)
	}
	if !fc.handler(msgEvent("R2", direct(alice), text("good"))) || len(rec.got) != 1 {
		t.Fatalf("later message: delivered %+v", rec.got)
	}
}
