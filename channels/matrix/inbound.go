package matrix

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/omega-gateway/omega/channels"
	"github.com/omega-gateway/omega/channels/matrix/mxapi"
)

// rooms remembers what the channel learned about its rooms: how many
// members each has (two: a direct chat), and where it already said it
// cannot read encrypted messages.
type rooms struct {
	mu      sync.Mutex
	members map[string]int
	warned  map[string]bool
	direct  map[string]string // user id -> direct chat, for chats named by user
}

func newRooms() *rooms {
	return &rooms{members: map[string]int{}, warned: map[string]bool{}, direct: map[string]string{}}
}

func (r *rooms) forget(roomID string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.members, roomID)
}

// handle acts on one sync batch: invites first, then each joined room's
// new events in order. initial is the first sync of an account, whose
// history is not answered.
func (c *Channel) handle(ctx context.Context, resp *mxapi.SyncResponse, initial bool, deliver channels.Deliver) error {
	for roomID, inv := range resp.Rooms.Invite {
		c.invited(ctx, roomID, inv)
	}
	for roomID, room := range resp.Rooms.Join {
		c.noteMembers(roomID, room.State.Events)
		c.noteMembers(roomID, room.Timeline.Events)
		if initial {
			continue
		}
		if room.Timeline.Limited {
			c.log.Error("matrix: the homeserver left older messages of a room out of the sync; they are not answered",
				"room", roomID, "kept", len(room.Timeline.Events))
		}
		for _, evt := range room.Timeline.Events {
			if err := c.event(ctx, roomID, evt, deliver); err != nil {
				return err
			}
		}
	}
	return nil
}

// invited joins a room an allowlisted person invited the bot to and
// rejects every other invite.
func (c *Channel) invited(ctx context.Context, roomID string, inv mxapi.InvitedRoom) {
	var inviter string
	for _, evt := range inv.InviteState.Events {
		if evt.Type == mxapi.TypeMember && evt.StateKey != nil && *evt.StateKey == c.cfg.UserID {
			inviter = evt.Sender
		}
	}
	rctx, cancel := context.WithTimeout(ctx, c.cfg.RequestTimeout)
	defer cancel()
	if !c.allowed(inviter) {
		c.log.Warn("matrix: invite from a user not on OMEGA_MATRIX_ALLOWED_USERS refused", "room", roomID, "inviter", inviter)
		if err := c.cli.Leave(rctx, roomID, "not allowed"); err != nil {
			c.log.Error("matrix: refusing an invite failed", "room", roomID, "err", err)
		}
		return
	}
	if err := c.cli.Join(rctx, roomID); err != nil {
		c.log.Error("matrix: joining a room failed", "room", roomID, "inviter", inviter, "err", err)
		return
	}
	c.rooms.forget(roomID)
	c.log.Info("matrix: joined a room", "room", roomID, "inviter", inviter)
}

// noteMembers forgets a room's member count when its members changed.
func (c *Channel) noteMembers(roomID string, evts []mxapi.Event) {
	for _, evt := range evts {
		if evt.Type == mxapi.TypeMember {
			c.rooms.forget(roomID)
			return
		}
	}
}

// event hands one timeline event to the pipeline when it is a message
// for the bot.
func (c *Channel) event(ctx context.Context, roomID string, evt mxapi.Event, deliver channels.Deliver) error {
	if evt.Sender == c.cfg.UserID {
		return nil
	}
	switch evt.Type {
	case mxapi.TypeEncrypted:
		c.refuseEncrypted(ctx, roomID, evt.Sender)
		return nil
	case mxapi.TypeMessage:
	default:
		return nil
	}
	var msg mxapi.Message
	if err := mxapi.Decode(evt.Content, &msg); err != nil {
		c.log.Warn("matrix: unreadable message skipped", "room", roomID, "event", evt.EventID, "err", err)
		return nil
	}
	if msg.RelatesTo != nil && msg.RelatesTo.RelType == mxapi.RelReplace {
		c.log.Info("matrix: an edit is not a new message; skipped", "room", roomID, "event", evt.EventID)
		return nil
	}
	in, ok := c.incoming(ctx, roomID, evt, &msg)
	if !ok {
		return nil
	}
	if err := deliver(ctx, in); err != nil {
		return fmt.Errorf("%w: event %s: %w", errDeliver, evt.EventID, err)
	}
	return nil
}

// incoming converts a message; false when it is not for the bot (a room
// message that does not mention it, a notice from another bot).
func (c *Channel) incoming(ctx context.Context, roomID string, evt mxapi.Event, msg *mxapi.Message) (channels.Incoming, bool) {
	in := channels.Incoming{
		Channel: Name, SenderID: evt.Sender, SenderName: localpart(evt.Sender), ChatID: roomID,
		PlatformID: evt.EventID, ReceivedAt: c.now(),
	}
	in.IsGroup = c.isGroup(ctx, roomID)
	in.Mentioned = c.mentioned(msg) || (in.IsGroup && c.repliesToBot(ctx, roomID, msg))
	if in.IsGroup && !in.Mentioned {
		return in, false
	}
	switch msg.MsgType {
	case mxapi.MsgText, mxapi.MsgEmote:
		in.Text = msg.Text()
	case mxapi.MsgImage:
		att, err := c.download(ctx, msg)
		if err != nil {
			c.log.Warn("matrix: image not downloaded; delivered without it", "room", roomID, "event", evt.EventID, "err", err)
			in.Text = "[an image that could not be downloaded]"
			break
		}
		in.Attachments = []channels.Attachment{att}
		in.Text = msg.Caption()
	default:
		// Notices are other bots talking; files and audio are not read.
		return in, false
	}
	return in, in.Text != "" || len(in.Attachments) > 0
}

// mentioned: the message names the bot in its m.mentions, by its user id
// or with a link to it.
func (c *Channel) mentioned(msg *mxapi.Message) bool {
	return msg.MentionsUser(c.cfg.UserID) || strings.Contains(msg.Body, c.cfg.UserID) ||
		strings.Contains(msg.FormattedBody, "matrix.to/#/"+c.cfg.UserID)
}

// repliesToBot: the message answers one of the bot's, as a reply
// (m.in_reply_to) to it.
func (c *Channel) repliesToBot(ctx context.Context, roomID string, msg *mxapi.Message) bool {
	if msg.RelatesTo == nil || msg.RelatesTo.InReplyTo == nil || msg.RelatesTo.InReplyTo.EventID == "" {
		return false
	}
	rctx, cancel := context.WithTimeout(ctx, c.cfg.RequestTimeout)
	defer cancel()
	sender, err := c.cli.EventSender(rctx, roomID, msg.RelatesTo.InReplyTo.EventID)
	if err != nil {
		c.log.Warn("matrix: the message a reply answers is unknown; not taken as a mention", "room", roomID, "err", err)
		return false
	}
	return sender == c.cfg.UserID
}

// isGroup reports whether the room has more than two members; unknown
// (the homeserver did not say) counts as a group, where the bot answers
// only when mentioned.
func (c *Channel) isGroup(ctx context.Context, roomID string) bool {
	c.rooms.mu.Lock()
	n, ok := c.rooms.members[roomID]
	c.rooms.mu.Unlock()
	if !ok {
		rctx, cancel := context.WithTimeout(ctx, c.cfg.RequestTimeout)
		defer cancel()
		var err error
		if n, err = c.cli.JoinedMembers(rctx, roomID); err != nil {
			c.log.Warn("matrix: room members unknown; treated as a group", "room", roomID, "err", err)
			return true
		}
		c.rooms.mu.Lock()
		c.rooms.members[roomID] = n
		c.rooms.mu.Unlock()
	}
	return n > 2
}

// localpart is "alice" of "@alice:example.org".
func localpart(userID string) string {
	local, _, _ := strings.Cut(strings.TrimPrefix(userID, "@"), ":")
	return local
}
