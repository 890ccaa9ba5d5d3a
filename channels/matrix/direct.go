package matrix

import (
	"context"
	"strings"
)

// chatRoom is the room a chat id names: a room id as it is, or, for a
// user id (an owner alert to "matrix:@you:example.org", the default
// destination when Matrix is the first alert channel), the direct chat
// with that user, created when there is none.
func (c *Channel) chatRoom(ctx context.Context, chatID string) (string, error) {
	if !strings.HasPrefix(chatID, "@") {
		return chatID, nil
	}
	c.rooms.mu.Lock()
	room, ok := c.rooms.direct[chatID]
	c.rooms.mu.Unlock()
	if ok {
		return room, nil
	}
	rctx, cancel := context.WithTimeout(ctx, c.cfg.RequestTimeout)
	defer cancel()
	room, err := c.cli.DirectRoom(rctx, chatID)
	if err != nil {
		return "", classify("direct chat with "+chatID, err)
	}
	c.rooms.mu.Lock()
	c.rooms.direct[chatID] = room
	c.rooms.mu.Unlock()
	return room, nil
}
