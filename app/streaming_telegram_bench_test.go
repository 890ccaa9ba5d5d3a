package app_test

import (
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/omega-gateway/omega/channels/telegram/telegramtest"
	"github.com/omega-gateway/omega/providers/providertest"
)

// BenchmarkStreamingReplyTelegram measures what a person waits for over
// Telegram: the time from the update becoming available to the bot to
// the first visible reply text (the first draft, or the first message of
// the reply) and to the final text (the last message or edit), p50 and
// p95, with the OpenAI-compatible provider against a model that answers
// like a real one (first token after 800 ms, then 120 words at 25 ms
// each), for 1 and 5 people at once. "drafts" previews with
// sendMessageDraft, "edits" on a Bot API without it (one message edited),
// "whole" is OMEGA_STREAMING=off. It also reports the visible messages a
// reply added (the most of any reply; it fails unless 1), when the
// model's answer ended ("model", its double's timers drift) and the final
// text's lag behind it ("aftermodel", what omega adds), and the
// sendMessageDraft, sendMessage and editMessageText calls per reply
// (mean and most). Each person reads a reply for readPause before
// writing again. Run with -benchtime=10x or more for meaningful
// percentiles.
func BenchmarkStreamingReplyTelegram(b *testing.B) {
	plan := providertest.StreamPlan{FirstToken: 800 * time.Millisecond, Every: 25 * time.Millisecond, Words: 120}
	modes := []struct {
		name      string
		drafts    telegramtest.DraftSupport
		streaming string
	}{
		{"drafts", telegramtest.DraftsSupported, "on"},
		{"edits", telegramtest.DraftsUnknown, "on"},
		{"whole", telegramtest.DraftsSupported, "off"},
	}
	for _, m := range modes {
		for _, users := range []int{1, 5} {
			b.Run(fmt.Sprintf("%s/users=%d", m.name, users), func(b *testing.B) {
				chats := make([]int64, users)
				for i := range chats {
					chats[i] = 1001 + int64(i)
				}
				rig := startTelegramStreaming(b, plan, m.drafts, m.streaming, chats)
				benchTelegramReplies(b, rig, chats, plan.Reply())
			})
		}
	}
}

// readPause is how long a person reads a reply before the next message.
// Without it the chat's Telegram pacing bucket, drained by the previous
// reply's preview, holds the next reply's first preview back until it
// refills (about 1.3 s to the first words instead of 0.8 s), which
// measures an impatient robot rather than a person.
const readPause = 2 * time.Second

func benchTelegramReplies(b *testing.B, rig *tgStreamRig, chats []int64, want string) {
	// First contact (the welcome, and on a Bot API without drafts the
	// one refused sendMessageDraft) is not the steady state.
	rounds(b, rig, chats, func(int64) string { return "hello" }, func(replyStats) {})
	var mu sync.Mutex
	var first, final, model, after []time.Duration
	var visible, calls []int
	b.ResetTimer()
	for i := range b.N {
		time.Sleep(readPause)
		// A text of its own finds the turn's request to the model.
		text := func(chat int64) string { return fmt.Sprintf("tell me story %d for %d", i, chat) }
		rounds(b, rig, chats, text, func(st replyStats) {
			if st.visible != 1 || st.text != want {
				b.Errorf("reply added %d visible messages, last %q; want 1 showing the whole reply", st.visible, st.text)
			}
			mu.Lock()
			defer mu.Unlock()
			first, final = append(first, st.first), append(final, st.final)
			if st.model > 0 {
				model, after = append(model, st.model), append(after, st.final-st.model)
			}
			visible, calls = append(visible, st.visible), append(calls, st.calls)
		})
	}
	b.StopTimer()
	report(b, "first", first)
	report(b, "final", final)
	report(b, "model", model)
	report(b, "aftermodel", after)
	if len(calls) > 0 {
		total := 0
		for _, c := range calls {
			total += c
		}
		b.ReportMetric(float64(slices.Max(visible)), "msgs/reply-max")
		b.ReportMetric(float64(total)/float64(len(calls)), "calls/reply")
		b.ReportMetric(float64(slices.Max(calls)), "calls/reply-max")
	}
}

// rounds has every chat send its text at once and hands each reply to seen.
func rounds(b *testing.B, rig *tgStreamRig, chats []int64, text func(chat int64) string, seen func(replyStats)) {
	var wg sync.WaitGroup
	for _, chat := range chats {
		wg.Go(func() {
			st, err := rig.reply(b.Context(), chat, text(chat))
			if err != nil {
				b.Error(err)
				return
			}
			seen(st)
		})
	}
	wg.Wait()
}
