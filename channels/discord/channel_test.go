package discord

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/omega-gateway/omega/channels/discord/discordtest"
)

// In a guild channel the bot takes only what mentions or replies to it,
// without the mention; DMs always; the bot's own and other bots'
// messages never.
func TestGuildMessagesNeedAMention(t *testing.T) {
	srv := discordtest.New(t, testToken)
	box := run(t, newChannel(t, testConfig(srv)), srv)
	const guild, general = "700000000000000001", "700000000000000002"
	quietID := srv.PushGuild(guild, general, alice, "talking among ourselves", false)
	srv.Push(discordtest.Message{GuildID: guild, ChannelID: general, AuthorID: "300", Author: "otherbot", Bot: true,
		Content: "<@" + discordtest.BotID + "> hi", MentionBot: true})
	mentioned := srv.PushGuild(guild, general, alice, "what time is it?", true)
	reply := srv.Push(discordtest.Message{GuildID: guild, ChannelID: general, AuthorID: alice, Author: "alice", Content: "and tomorrow?", ReplyTo: "123"})
	dm := srv.PushDM(alice, "a direct question")
	received(t, box, dm)
	got := box.all()
	if len(got) != 3 || got[0].PlatformID != mentioned || got[1].PlatformID != reply || got[2].PlatformID != dm {
		t.Fatalf("delivered %v, want the mention %s, the reply %s and the DM %s (not %s)", box.ids(), mentioned, reply, dm, quietID)
	}
	if in := got[0]; in.Text != "what time is it?" || !in.IsGroup || !in.Mentioned || in.ChatID != "#"+general || in.SenderID != alice {
		t.Errorf("guild mention delivered as %+v", in)
	}
	if in := got[2]; in.IsGroup || in.ChatID != alice || in.SenderID != alice || in.Channel != Name {
		t.Errorf("DM delivered as %+v", in)
	}
	if _, err := newChannelFor(t, srv).SendText(t.Context(), "#"+general, "it is noon"); err != nil {
		t.Fatal(err)
	}
	if sent := srv.SentTo(general); len(sent) != 1 || sent[0].Content != "it is noon" {
		t.Fatalf("guild channel got %+v", sent)
	}
}

func newChannelFor(t *testing.T, srv *discordtest.Server) *Channel {
	t.Helper()
	return newChannel(t, testConfig(srv))
}

func TestAttachmentsArrive(t *testing.T) {
	srv := discordtest.New(t, testToken)
	box := run(t, newChannel(t, testConfig(srv)), srv)
	png := []byte("\x89PNG\r\n\x1a\n pixels")
	id := srv.Push(discordtest.Message{ChannelID: srv.DMChannel(alice), AuthorID: alice, Author: "alice", Content: "what is this?",
		Attachments: []discordtest.Attachment{{Name: "cat.png", ContentType: "image/png", Data: png}}})
	received(t, box, id)
	in := box.all()[0]
	if len(in.Attachments) != 1 || in.Attachments[0].MIME != "image/png" || !bytes.Equal(in.Attachments[0].Data, png) || in.Text != "what is this?" {
		t.Fatalf("delivered %+v", in)
	}
}

// A 429 is waited out for as long as Retry-After says, then the message
// goes; the typing indicator goes to the DM channel.
func TestRateLimitIsHonoured(t *testing.T) {
	srv := discordtest.New(t, testToken)
	ch := newChannel(t, testConfig(srv))
	dm := srv.DMChannel(alice)
	const after = 700 * time.Millisecond
	srv.RateLimitNext("POST messages", after)
	if _, err := ch.SendText(t.Context(), alice, "patience"); err != nil {
		t.Fatalf("SendText after a 429: %v", err)
	}
	calls := srv.Requests("POST /channels/" + dm + "/messages")
	if len(calls) != 2 || calls[1].Sub(calls[0]) < after {
		t.Fatalf("%d calls %v, want a retry no sooner than %s after the 429", len(calls), calls, after)
	}
	if sent := srv.SentTo(dm); len(sent) != 1 || sent[0].Content != "patience" {
		t.Fatalf("sent %+v", sent)
	}
	if err := ch.SendTyping(t.Context(), alice); err != nil {
		t.Fatal(err)
	}
	if got := srv.Typing(); len(got) != 1 || got[0] != dm {
		t.Fatalf("typing in %v, want %s", got, dm)
	}
}

// A bucket left with no requests (X-RateLimit-Remaining: 0) is not
// called again before its X-RateLimit-Reset-After.
func TestRateLimitBucketIsHonoured(t *testing.T) {
	srv := discordtest.New(t, testToken)
	ch := newChannel(t, testConfig(srv))
	dm := srv.DMChannel(alice)
	const resetAfter = 700 * time.Millisecond
	srv.ExhaustBucket("POST messages", resetAfter)
	for _, text := range []string{"one", "two"} {
		if _, err := ch.SendText(t.Context(), alice, text); err != nil {
			t.Fatal(err)
		}
	}
	calls := srv.Requests("POST /channels/" + dm + "/messages")
	if len(calls) != 2 || calls[1].Sub(calls[0]) < resetAfter {
		t.Fatalf("calls at %v, want the second no sooner than %s after the first", calls, resetAfter)
	}
}

func TestSendRejectsBadChats(t *testing.T) {
	srv := discordtest.New(t, testToken)
	ch := newChannel(t, testConfig(srv))
	for _, chat := range []string{"", "alice", "#general", "#"} {
		if _, err := ch.SendText(t.Context(), chat, "x"); err == nil || !strings.Contains(err.Error(), "want a user id") {
			t.Errorf("chat %q: %v", chat, err)
		}
	}
}
