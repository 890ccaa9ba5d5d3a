package matrix

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
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
	room, err := c.cli.directRoom(rctx, chatID)
	if err != nil {
		return "", classify("direct chat with "+chatID, err)
	}
	c.rooms.mu.Lock()
	c.rooms.direct[chatID] = room
	c.rooms.mu.Unlock()
	return room, nil
}

// directRoom finds a joined room that m.direct lists for user, or
// creates one, invites user and lists it there.
func (c *client) directRoom(ctx context.Context, user string) (string, error) {
	direct := map[string][]string{}
	path := "/_matrix/client/v3/user/" + c.userPath() + "/account_data/m.direct"
	err := c.do(ctx, http.MethodGet, path, nil, nil, "", &direct)
	if ae := (*apiError)(nil); errors.As(err, &ae) && ae.Status == http.StatusNotFound {
		err = nil
	}
	if err != nil {
		return "", err
	}
	var joined struct {
		Rooms []string `json:"joined_rooms"`
	}
	if err := c.do(ctx, http.MethodGet, "/_matrix/client/v3/joined_rooms", nil, nil, "", &joined); err != nil {
		return "", err
	}
	for _, room := range direct[user] {
		if slices.Contains(joined.Rooms, room) {
			return room, nil
		}
	}
	var created struct {
		RoomID string `json:"room_id"`
	}
	req := map[string]any{"preset": "trusted_private_chat", "is_direct": true, "invite": []string{user}}
	if err := c.do(ctx, http.MethodPost, "/_matrix/client/v3/createRoom", nil, req, "", &created); err != nil {
		return "", err
	}
	direct[user] = append(direct[user], created.RoomID)
	if err := c.do(ctx, http.MethodPut, path, nil, direct, "", nil); err != nil {
		return "", fmt.Errorf("list %s in m.direct: %w", created.RoomID, err)
	}
	return created.RoomID, nil
}
