package discord

import (
	"context"
	"slices"
	"sync"

	"github.com/bwmarrin/discordgo"
)

// A resumed session replays what Discord sent while the connection was
// down; a new session (after INVALID_SESSION, or a session Discord no
// longer holds) replays nothing. After such a session the channel reads
// the history of every channel it has seen a message in since its last
// message there, so nothing said in between is lost; the pipeline drops
// what it already has (the message id is the dedup key).

// catchUpLimit is the most messages read back per channel (Discord's
// page size).
const catchUpLimit = 100

// lastSeen is the newest message id seen per Discord channel.
type lastSeen struct {
	mu   sync.Mutex
	byID map[string]string
}

func (l *lastSeen) see(channel, id string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.byID == nil {
		l.byID = map[string]string{}
	}
	if cur, ok := l.byID[channel]; !ok || snowflakeLess(cur, id) {
		l.byID[channel] = id
	}
}

func (l *lastSeen) snapshot() map[string]string {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make(map[string]string, len(l.byID))
	for k, v := range l.byID {
		out[k] = v
	}
	return out
}

// snowflakeLess orders ids as numbers (they grow with time).
func snowflakeLess(a, b string) bool {
	if len(a) != len(b) {
		return len(a) < len(b)
	}
	return a < b
}

// catchUp queues the messages sent after the last one seen in each
// channel, oldest first.
func (c *Channel) catchUp(ctx context.Context, queue chan<- *discordgo.Message) {
	total := 0
	for ch, after := range c.seen.snapshot() {
		msgs, err := c.sess.ChannelMessages(ch, catchUpLimit, "", after, "", discordgo.WithContext(ctx))
		if err != nil {
			c.log.Error("discord: reading back the messages sent while the session was lost failed", "discord_channel", ch, "after", after, "err", classify(err))
			continue
		}
		slices.SortFunc(msgs, func(a, b *discordgo.Message) int {
			switch {
			case a.ID == b.ID:
				return 0
			case snowflakeLess(a.ID, b.ID):
				return -1
			}
			return 1
		})
		for _, m := range msgs {
			if m.ChannelID == "" {
				m.ChannelID = ch
			}
			c.seen.see(ch, m.ID)
			select {
			case queue <- m:
				total++
			case <-ctx.Done():
				return
			}
		}
	}
	if total > 0 {
		c.log.Info("discord: read back messages sent while the session was lost", "messages", total)
	}
}
