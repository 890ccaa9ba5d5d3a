package telegram

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/omega-gateway/omega/channels"
	"github.com/omega-gateway/omega/channels/telegram/telegramtest"
)

const testToken = "123456:ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghi"

// sleeps records requested waits and returns at once, so tests never
// wait in real time; each wait advances its fake clock.
type sleeps struct {
	mu     sync.Mutex
	all    []time.Duration
	now    time.Time
	timers []*fakeTimer // see preview_test.go
}

func (s *sleeps) sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	s.all = append(s.all, d)
	s.now = s.now.Add(max(d, 0))
	s.mu.Unlock()
	if err := ctx.Err(); err != nil {
		return err
	}
	// Yield briefly so retry loops do not spin hot.
	time.Sleep(time.Millisecond)
	return ctx.Err()
}

// clock is the fake time: the start plus every wait so far.
func (s *sleeps) clock() time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.now
}

// advance lets time pass without a wait, as between two turns, firing
// the timers that fall due.
func (s *sleeps) advance(d time.Duration) {
	s.mu.Lock()
	s.now = s.now.Add(d)
	s.mu.Unlock()
	s.fireDue()
}

func (s *sleeps) positive() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []time.Duration
	for _, d := range s.all {
		if d > 0 {
			out = append(out, d)
		}
	}
	return out
}

type fixture struct {
	srv    *telegramtest.Server
	ch     *Channel
	sleeps *sleeps
}

func newFixture(t *testing.T, edit func(*Config)) *fixture {
	t.Helper()
	return newFixtureOn(t, telegramtest.New(t, testToken), edit)
}

// newFixtureOn is a fresh channel, as after a restart, on srv.
func newFixtureOn(t *testing.T, srv *telegramtest.Server, edits ...func(*Config)) *fixture {
	t.Helper()
	cfg := Config{Token: testToken, APIURL: srv.URL, GroupMode: GroupModeMention}
	for _, edit := range edits {
		if edit != nil {
			edit(&cfg)
		}
	}
	sl := &sleeps{now: time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)}
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	ch, err := New(cfg, logger, WithSleep(sl.sleep), WithClock(sl.clock), WithTimer(sl.after), WithPollTimeout(time.Second))
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return &fixture{srv: srv, ch: ch, sleeps: sl}
}

// start runs the channel, delivering into the returned channel through
// deliver (nil: always succeed).
func (f *fixture) start(t *testing.T, deliver func(channels.Incoming) error) <-chan channels.Incoming {
	t.Helper()
	got := make(chan channels.Incoming, 100)
	errc := make(chan error, 1)
	go func() {
		errc <- f.ch.Start(context.Background(), func(_ context.Context, in channels.Incoming) error {
			if deliver != nil {
				if err := deliver(in); err != nil {
					return err
				}
			}
			got <- in
			return nil
		})
	}()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := f.ch.Stop(ctx); err != nil {
			t.Errorf("Stop: %v", err)
		}
		if err := <-errc; err != nil {
			t.Errorf("Start returned %v", err)
		}
	})
	return got
}

func receive(t *testing.T, got <-chan channels.Incoming) channels.Incoming {
	t.Helper()
	select {
	case in := <-got:
		return in
	case <-time.After(5 * time.Second):
		t.Fatal("no message delivered")
		return channels.Incoming{}
	}
}

func message(chatID, fromID int64, extra map[string]any) map[string]any {
	m := telegramtest.Message(chatID, fromID, "")
	for k, v := range extra {
		m[k] = v
	}
	return map[string]any{"message": m}
}

func TestInboundText(t *testing.T) {
	f := newFixture(t, nil)
	got := f.start(t, nil)
	f.srv.PushUpdate(message(42, 42, map[string]any{
		"message_id": 7, "text": "/start@omega_test_bot hi",
		"from": map[string]any{"id": 42, "is_bot": false, "first_name": "Ada", "last_name": "Lovelace"},
	}))
	in := receive(t, got)
	want := channels.Incoming{Channel: "telegram", SenderID: "42", SenderName: "Ada Lovelace", ChatID: "42",
		Text: "/start@omega_test_bot hi", PlatformID: "42:7", Mentioned: true}
	in.ReceivedAt = time.Time{}
	if fmt.Sprint(in) != fmt.Sprint(want) {
		t.Errorf("got  %+v\nwant %+v", in, want)
	}
	if f.ch.BotUsername() != telegramtest.BotUsername {
		t.Errorf("BotUsername = %q", f.ch.BotUsername())
	}
}

func TestInboundPhotoIsAttached(t *testing.T) {
	f := newFixture(t, nil)
	f.srv.AddFile("small", []byte("tiny"))
	f.srv.AddFile("big", []byte("the large jpeg"))
	got := f.start(t, nil)
	f.srv.PushUpdate(message(5, 5, map[string]any{
		"caption": "look",
		"photo": []map[string]any{
			{"file_id": "small", "file_unique_id": "s", "width": 90, "height": 90},
			{"file_id": "big", "file_unique_id": "b", "width": 1280, "height": 960},
		},
	}))
	in := receive(t, got)
	if in.Text != "look" || len(in.Attachments) != 1 {
		t.Fatalf("got text %q, %d attachments", in.Text, len(in.Attachments))
	}
	if a := in.Attachments[0]; string(a.Data) != "the large jpeg" || a.MIME != "image/jpeg" || a.Name != "big" {
		t.Errorf("attachment = %q %q %q", a.Name, a.MIME, a.Data)
	}
}

func voiceUpdate() map[string]any {
	return message(5, 5, map[string]any{
		"voice": map[string]any{"file_id": "v1", "file_unique_id": "v", "duration": 2, "mime_type": "audio/ogg"},
	})
}

func TestInboundVoiceWithoutTranscription(t *testing.T) {
	f := newFixture(t, nil)
	got := f.start(t, nil)
	f.srv.PushUpdate(voiceUpdate())
	if in := receive(t, got); in.Text != NoteVoiceNotConfigured {
		t.Errorf("text = %q", in.Text)
	}
}

func TestInboundVoiceTranscribed(t *testing.T) {
	var seen struct {
		path, auth, model, file string
	}
	whisper := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen.path, seen.auth, seen.model = r.URL.Path, r.Header.Get("Authorization"), r.FormValue("model")
		if file, _, err := r.FormFile("file"); err == nil {
			b, _ := io.ReadAll(file)
			seen.file = string(b)
		}
		_, _ = io.WriteString(w, `{"text":" hello from voice "}`)
	}))
	t.Cleanup(whisper.Close)
	f := newFixture(t, func(c *Config) {
		c.TranscribeURL, c.TranscribeAPIKey, c.TranscribeModel = whisper.URL+"/v1", "sk-test", "whisper-1"
	})
	f.srv.AddFile("v1", []byte("OggS-audio"))
	got := f.start(t, nil)
	f.srv.PushUpdate(voiceUpdate())
	if in := receive(t, got); in.Text != "hello from voice" {
		t.Errorf("text = %q", in.Text)
	}
	if seen.path != "/v1/audio/transcriptions" || seen.auth != "Bearer sk-test" || seen.model != "whisper-1" || seen.file != "OggS-audio" {
		t.Errorf("transcription request = %+v", seen)
	}
}

func TestGroupMentionFiltering(t *testing.T) {
	const group = -100123
	reply := map[string]any{"message_id": 1, "date": 1, "chat": map[string]any{"id": group, "type": "supergroup"},
		"from": map[string]any{"id": telegramtest.BotID, "is_bot": true, "first_name": "bot"}}
	updates := []map[string]any{
		message(group, 5, map[string]any{"message_id": 10, "text": "chatting among ourselves"}),
		message(group, 5, map[string]any{"message_id": 11, "text": "hey @Omega_Test_Bot, help"}),
		message(group, 5, map[string]any{"message_id": 12, "text": "@omega_test_botty is someone else"}),
		message(group, 5, map[string]any{"message_id": 13, "text": "yes", "reply_to_message": reply}),
		message(group, 5, map[string]any{"message_id": 14, "text": "/help@omega_test_bot"}),
	}
	tests := []struct {
		mode string
		want []string
	}{
		{GroupModeMention, []string{"11", "13", "14"}},
		{GroupModeAll, []string{"10", "11", "12", "13", "14"}},
	}
	for _, tt := range tests {
		t.Run(tt.mode, func(t *testing.T) {
			f := newFixture(t, func(c *Config) { c.GroupMode = tt.mode })
			got := f.start(t, nil)
			for _, u := range updates {
				f.srv.PushUpdate(u)
			}
			for _, id := range tt.want {
				in := receive(t, got)
				if in.PlatformID != fmt.Sprintf("%d:%s", group, id) || !in.IsGroup {
					t.Fatalf("got %s (group %v), want message %s", in.PlatformID, in.IsGroup, id)
				}
				wantMention := id != "10" && id != "12"
				if in.Mentioned != wantMention {
					t.Errorf("message %s: Mentioned = %v", id, in.Mentioned)
				}
			}
		})
	}
}

func TestMalformedAndUnknownUpdatesDoNotStopPolling(t *testing.T) {
	f := newFixture(t, nil)
	got := f.start(t, nil)
	f.srv.PushUpdate(`{"message": {"message_id": "not a number", "chat": 5, "text": 12}}`)
	f.srv.PushUpdate(`{"poll": {"id": "p1", "question": "?"}}`)
	f.srv.PushUpdate(`{"edited_message": {"message_id": 1, "date": 1, "chat": {"id": 1, "type": "private"}}}`)
	f.srv.PushText(9, 9, "still alive")
	if in := receive(t, got); in.Text != "still alive" {
		t.Errorf("text = %q", in.Text)
	}
}

func TestLongTextIsTruncated(t *testing.T) {
	f := newFixture(t, nil)
	got := f.start(t, nil)
	f.srv.PushText(9, 9, strings.Repeat("é", MaxTextLen+10))
	if in := receive(t, got); len([]rune(in.Text)) != MaxTextLen {
		t.Errorf("got %d characters", len([]rune(in.Text)))
	}
}

func TestOffsetAdvancesOnlyAfterDelivery(t *testing.T) {
	f := newFixture(t, nil)
	var mu sync.Mutex
	failures := 2
	got := f.start(t, func(channels.Incoming) error {
		mu.Lock()
		defer mu.Unlock()
		if failures > 0 {
			failures--
			return errors.New("store unavailable")
		}
		return nil
	})
	f.srv.PushText(9, 9, "first")
	f.srv.PushText(9, 9, "second")
	first := receive(t, got)
	second := receive(t, got)
	if first.Text != "first" || second.Text != "second" {
		t.Fatalf("got %q then %q", first.Text, second.Text)
	}
	if b := f.sleeps.positive(); len(b) < 2 || b[0] != time.Second || b[1] != 2*time.Second {
		t.Errorf("backoff = %v, want 1s then 2s", b)
	}
}

func TestDeliverErrorRedeliversSameUpdate(t *testing.T) {
	f := newFixture(t, nil)
	var mu sync.Mutex
	var attempts []string
	got := f.start(t, func(in channels.Incoming) error {
		mu.Lock()
		defer mu.Unlock()
		attempts = append(attempts, in.PlatformID)
		if len(attempts) == 1 {
			return errors.New("boom")
		}
		return nil
	})
	f.srv.PushText(9, 9, "once")
	receive(t, got)
	mu.Lock()
	defer mu.Unlock()
	if len(attempts) != 2 || attempts[0] != attempts[1] {
		t.Errorf("attempts = %v, want the same update twice", attempts)
	}
}

func TestWrongTokenFailsStart(t *testing.T) {
	srv := telegramtest.New(t, "999:ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghi")
	ch, err := New(Config{Token: testToken, APIURL: srv.URL}, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = ch.Start(context.Background(), func(context.Context, channels.Incoming) error { return nil })
	if err == nil || strings.Contains(err.Error(), testToken) {
		t.Errorf("Start error = %v, want a token-free error", err)
	}
}
