package telegram

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/omega-gateway/omega/channels"
	"github.com/omega-gateway/omega/channels/telegram/telegramtest"
	"github.com/omega-gateway/omega/domain/intake"
)

// validating refuses what the gateway refuses, the way the gateway does.
func validating(in channels.Incoming) error {
	_, err := intake.ValidateIntake(intake.Intake{Channel: in.Channel, SenderID: in.SenderID, SenderName: in.SenderName,
		ChatID: in.ChatID, PlatformID: in.PlatformID, Text: in.Text}, 0)
	if err != nil {
		return fmt.Errorf("receive: %w", err)
	}
	return nil
}

// An update refused at intake is skipped, with the offset moved past it:
// the updates after it are delivered.
func TestRefusedUpdateDoesNotBlockLaterOnes(t *testing.T) {
	f := newFixture(t, nil)
	got := f.start(t, validating)
	f.srv.PushUpdate(message(42, 42, map[string]any{"message_id": 1, "text": "bad\x00text"}))
	f.srv.PushUpdate(message(42, 42, map[string]any{"message_id": 2, "text": "good"}))
	in := receive(t, got)
	if in.Text != "good" || in.PlatformID != "42:2" {
		t.Fatalf("delivered %+v, want the good update", in)
	}
	deadline := time.Now().Add(5 * time.Second)
	for f.srv.Pending() > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("%d update(s) still unconfirmed", f.srv.Pending())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func fuzzChannel(t testing.TB) *Channel {
	srv := telegramtest.New(t, testToken)
	sl := &sleeps{}
	ch, err := New(Config{Token: testToken, APIURL: srv.URL, GroupMode: GroupModeMention},
		slog.New(slog.NewTextHandler(io.Discard, nil)), WithSleep(sl.sleep), WithPollTimeout(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	return ch
}

// FuzzTelegramUpdate feeds arbitrary updates to the inbound path: it must
// not panic, must return (a bad update is skipped, never retried for
// ever), must deliver only what intake accepts, and a good update handled
// after it is still delivered.
func FuzzTelegramUpdate(f *testing.F) {
	seed := func(v any) []byte { b, _ := json.Marshal(v); return b }
	f.Add(seed(map[string]any{"update_id": 1, "message": telegramtest.Message(42, 42, "hello")}))
	f.Add(seed(map[string]any{"update_id": 2, "message": telegramtest.Message(42, 42, "nul\x00here")}))
	f.Add(seed(map[string]any{"update_id": 3, "message": telegramtest.Message(-100, 7, "@omega_test_bot hi")}))
	f.Add(seed(map[string]any{"update_id": 4, "message": map[string]any{"message_id": 1, "chat": map[string]any{"id": 1, "type": "private"}}}))
	f.Add(seed(map[string]any{"update_id": 5, "message": map[string]any{"message_id": 1, "date": 1, "chat": map[string]any{"id": 1, "type": "private"},
		"from": map[string]any{"id": 1, "first_name": strings.Repeat("\x01", 300)}, "photo": []any{map[string]any{"file_id": "nope", "width": 1, "height": 1}}, "caption": "pic"}}))
	f.Add(seed(map[string]any{"update_id": 6, "edited_message": telegramtest.Message(1, 1, "x")}))
	f.Add([]byte(`{"update_id":7,"message":{"message_id":1,"chat":{"id":1,"type":"private"},"from":{"id":1},"voice":{"file_id":"v"}}}`))
	f.Add([]byte(`{"update_id":`))
	f.Add([]byte(`null`))
	ch := fuzzChannel(f)
	good := seed(map[string]any{"update_id": 99, "message": telegramtest.Message(5, 5, "still here")})
	f.Fuzz(func(t *testing.T, raw []byte) {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		var delivered []channels.Incoming
		deliver := func(_ context.Context, in channels.Incoming) error {
			if err := validating(in); err != nil {
				return err
			}
			delivered = append(delivered, in)
			return nil
		}
		if err := ch.handle(ctx, 1, json.RawMessage(raw), deliver); err != nil {
			t.Fatalf("handle did not return for %q: %v", raw, err)
		}
		if len(delivered) > 1 {
			t.Fatalf("one update delivered %d times", len(delivered))
		}
		delivered = nil
		if err := ch.handle(ctx, 99, good, deliver); err != nil || len(delivered) != 1 || delivered[0].Text != "still here" {
			t.Fatalf("good update after %q: err %v, delivered %+v", raw, err, delivered)
		}
	})
}
