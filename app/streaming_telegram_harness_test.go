package app_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/omega-gateway/omega/app"
	"github.com/omega-gateway/omega/channels"
	"github.com/omega-gateway/omega/channels/telegram"
	"github.com/omega-gateway/omega/channels/telegram/telegramtest"
	"github.com/omega-gateway/omega/domain"
	"github.com/omega-gateway/omega/handlers/pipeline"
	"github.com/omega-gateway/omega/providers/providertest"
)

// replyMethods are the Bot API calls that show a reply's text.
var replyMethods = []string{"sendMessageDraft", "sendMessage", "editMessageText"}

// tgStreamRig is `omega serve`'s runtime with the Telegram channel against
// the Bot API double and the real OpenAI-compatible provider against a
// streaming model double, with a clock on every Bot API call.
type tgStreamRig struct {
	api   *telegramtest.Server
	model *providertest.StreamServer
	node  *tgNode
	clock *callClock
	calls *modelCalls // the provider's requests, through a timing proxy
}

// startTelegramStreaming starts a rig whose chats are private chats with
// the people chats; streaming is OMEGA_STREAMING ("on" or "off").
// Telegram's waits (pacing, retry_after) and its long poll are the
// production ones.
func startTelegramStreaming(tb testing.TB, plan providertest.StreamPlan, drafts telegramtest.DraftSupport, streaming string, chats []int64) *tgStreamRig {
	tb.Helper()
	api := telegramtest.New(tb, tgToken)
	api.SetDrafts(drafts)
	model := providertest.StreamingOpenAI(tb, plan)
	calls, proxy := proxyModel(tb, model.URL)
	allowed := make([]string, len(chats))
	for i, c := range chats {
		allowed[i] = strconv.FormatInt(c, 10)
	}
	vars := telegramVars(map[string]string{
		"OMEGA_DATA_DIR": tb.TempDir(), "HOME": tb.TempDir(), "OMEGA_LEASE_TTL": "5s",
		"OMEGA_STATUS_FIRST": "0s", "OMEGA_CLASSIFY": "false", "OMEGA_STREAMING": streaming,
		"OMEGA_PROVIDER": "openai", "OMEGA_OPENAI_BASE_URL": proxy,
	}, api, strings.Join(allowed, ","))
	cfg := loadConfig(tb, vars)
	tg, err := telegram.New(telegram.From(cfg.Channels), quiet)
	if err != nil {
		tb.Fatal(err)
	}
	auth := &pipeline.Auth{Allowed: map[string][]string{telegram.Name: telegram.From(cfg.Channels).AllowedUserIDs()}}
	clock := watchCalls(tb, api)
	node := startChannelNode(tb, cfg, app.RuntimeOptions{Channels: []channels.Channel{tg}, Auth: auth, BotName: tg.BotUsername}, nil)
	return &tgStreamRig{api: api, model: model, node: node, clock: clock, calls: calls}
}

// stampedCall is a Bot API call and when the double recorded it (seen by
// the clock's watcher, which wakes on every recorded call).
type stampedCall struct {
	telegramtest.Call
	At time.Time
}

// callClock stamps the double's calls as they are recorded.
type callClock struct {
	api     *telegramtest.Server
	mu      sync.Mutex
	calls   []stampedCall
	changed chan struct{} // closed and replaced when calls grow
}

func watchCalls(tb testing.TB, api *telegramtest.Server) *callClock {
	c := &callClock{api: api, changed: make(chan struct{})}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			sent, err := api.WaitSent(ctx, c.len()+1)
			now := time.Now()
			if err != nil {
				return
			}
			c.mu.Lock()
			for _, call := range sent[len(c.calls):] {
				c.calls = append(c.calls, stampedCall{Call: call, At: now})
			}
			close(c.changed)
			c.changed = make(chan struct{})
			c.mu.Unlock()
		}
	}()
	tb.Cleanup(func() { cancel(); <-done })
	return c
}

func (c *callClock) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.calls)
}

// sync waits until every call the double recorded so far is stamped and
// returns how many there are.
func (c *callClock) sync(ctx context.Context) (int, error) {
	n := len(c.api.Sent())
	for {
		c.mu.Lock()
		have, changed := len(c.calls), c.changed
		c.mu.Unlock()
		if have >= n {
			return n, nil
		}
		select {
		case <-ctx.Done():
			return 0, fmt.Errorf("stamp %d Bot API calls, have %d: %w", n, have, ctx.Err())
		case <-changed:
		}
	}
}

// chatCalls returns the stamped calls to chat of methods from index from
// up to to.
func (c *callClock) chatCalls(chat int64, from, to int, methods ...string) []stampedCall {
	id := strconv.FormatInt(chat, 10)
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []stampedCall
	for _, call := range c.calls[from:to] {
		for _, m := range methods {
			if call.ChatID == id && call.Method == m {
				out = append(out, call)
			}
		}
	}
	return out
}

// replyStats is what one reply cost a person and the Bot API.
type replyStats struct {
	first, final time.Duration // from the update to the first and to the final visible text
	model        time.Duration // from the update to the model's last byte
	visible      int           // messages the reply added to the chat
	calls        int           // sendMessageDraft, sendMessage and editMessageText calls, refused ones included
	text         string        // the reply's visible text
	window       []stampedCall // the reply's calls of replyMethods
}

// reply makes the person in the private chat send text and follows the
// reply until its turn completed.
func (r *tgStreamRig) reply(ctx context.Context, chat int64, text string) (replyStats, error) {
	var st replyStats
	from, err := r.clock.sync(ctx)
	if err != nil {
		return st, err
	}
	before := len(r.api.VisibleMessages(chat))
	start := time.Now()
	id := r.api.PushText(chat, chat, text)
	if err := r.waitCompleted(ctx, tgTurnID(chat, id)); err != nil {
		return st, err
	}
	to, err := r.clock.sync(ctx)
	if err != nil {
		return st, err
	}
	st.window = r.clock.chatCalls(chat, from, to, replyMethods...)
	st.calls = len(st.window)
	for _, c := range st.window {
		if !c.Accepted() {
			continue
		}
		if st.first == 0 && c.Method != "editMessageText" {
			st.first = c.At.Sub(start)
		}
		if c.Method != "sendMessageDraft" {
			st.final = c.At.Sub(start) // the last message or edit the person sees
		}
	}
	if end, ok := r.calls.endOf(text); ok {
		st.model = end.Sub(start)
	}
	vis := r.api.VisibleMessages(chat)
	st.visible = len(vis) - before
	if st.visible > 0 {
		st.text = vis[len(vis)-1].Text
	}
	if st.first == 0 || st.final == 0 {
		return st, fmt.Errorf("chat %d: no reply text was shown: %+v", chat, st.window)
	}
	return st, nil
}

// waitCompleted polls the turn's stream until it completed.
func (r *tgStreamRig) waitCompleted(ctx context.Context, turnID string) error {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	for {
		evs, err := r.node.rt.Store.Load(ctx, domain.TurnStream(turnID), 1)
		if err != nil {
			return fmt.Errorf("load turn %s: %w", turnID, err)
		}
		if countType(evs, completed) > 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("turn %s did not complete: %w", turnID, ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
}
