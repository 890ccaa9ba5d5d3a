// Package mxapi speaks the parts of the Matrix client-server API omega's
// Matrix channel uses: sync, rooms, messages, media and the account.
// It is written here rather than taken from mautrix: mautrix v0.32.0
// requires go.mau.fi/util v0.11.0, whose database helpers the newest
// whatsmeow omega links can no longer build against.
package mxapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// Client is one account's connection to its homeserver. Every call
// takes its deadline from ctx; none retries.
type Client struct {
	base   string // homeserver URL without a trailing slash
	token  string
	userID string
	http   *http.Client
	txn    atomic.Int64
	txnPre string
}

// New returns a client of the account userID, authenticated by token.
func New(homeserver, userID, token string) *Client {
	return &Client{base: strings.TrimRight(homeserver, "/"), token: token, userID: userID, http: &http.Client{},
		txnPre: "omega" + strconv.FormatInt(time.Now().UnixNano(), 36)}
}

// Error is a non-2xx answer: its status, the Matrix error code and
// text, and how long a 429 asked to wait.
type Error struct {
	Status     int
	Code       string `json:"errcode"`
	Message    string `json:"error"`
	RetryAfter time.Duration
}

func (e *Error) Error() string {
	if e.Code == "" {
		return fmt.Sprintf("HTTP %d", e.Status)
	}
	return fmt.Sprintf("HTTP %d %s: %s", e.Status, e.Code, e.Message)
}

// do sends one request; body is JSON-encoded unless it is raw bytes
// (contentType then names them), and a 2xx answer is decoded into out.
func (c *Client) do(ctx context.Context, method, path string, query url.Values, body any, contentType string, out any) error {
	u := c.base + path
	if len(query) > 0 {
		u += "?" + query.Encode()
	}
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case []byte:
		rd = bytes.NewReader(b)
	default:
		data, err := json.Marshal(b)
		if err != nil {
			return fmt.Errorf("encode %s: %w", path, err)
		}
		rd, contentType = bytes.NewReader(data), "application/json"
	}
	req, err := http.NewRequestWithContext(ctx, method, u, rd)
	if err != nil {
		return err
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, path, scrub(err))
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode/100 != 2 {
		return readError(resp)
	}
	if out == nil {
		return nil
	}
	if raw, ok := out.(*[]byte); ok {
		*raw, err = io.ReadAll(io.LimitReader(resp.Body, maxMedia+1))
		if err == nil && len(*raw) > maxMedia {
			return fmt.Errorf("%s: larger than %d bytes", path, maxMedia)
		}
		return err
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		return fmt.Errorf("%s %s: decode: %w", method, path, err)
	}
	return nil
}

// maxMedia bounds a downloaded image.
const maxMedia = 20 << 20

func readError(resp *http.Response) error {
	e := &Error{Status: resp.StatusCode}
	var body struct {
		RetryAfterMS int64 `json:"retry_after_ms"`
	}
	data, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	_ = json.Unmarshal(data, e)
	_ = json.Unmarshal(data, &body)
	e.RetryAfter = time.Duration(body.RetryAfterMS) * time.Millisecond
	if s := resp.Header.Get("Retry-After"); e.RetryAfter == 0 && s != "" {
		if secs, err := strconv.Atoi(s); err == nil {
			e.RetryAfter = time.Duration(secs) * time.Second
		}
	}
	return e
}

// scrub drops the URL from a transport error: it is logged, and the
// token never travels in it, but the query (the sync position) is noise.
func scrub(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

func (c *Client) userPath() string { return url.PathEscape(c.userID) }

// SyncResponse is the part of /sync the channel reads.
type SyncResponse struct {
	NextBatch string `json:"next_batch"`
	Rooms     struct {
		Join   map[string]JoinedRoom  `json:"join"`
		Invite map[string]InvitedRoom `json:"invite"`
	} `json:"rooms"`
}

// JoinedRoom is a joined room's part of a sync.
type JoinedRoom struct {
	State    struct{ Events []Event } `json:"state"`
	Timeline struct {
		Events []Event `json:"events"`
		// Limited: older events of the batch were left out.
		Limited bool `json:"limited"`
	} `json:"timeline"`
}

// InvitedRoom is a pending invite: the room's stripped state.
type InvitedRoom struct {
	InviteState struct{ Events []Event } `json:"invite_state"`
}

// Event is a timeline or state event.
type Event struct {
	Type     string          `json:"type"`
	EventID  string          `json:"event_id"`
	Sender   string          `json:"sender"`
	StateKey *string         `json:"state_key"`
	Content  json.RawMessage `json:"content"`
}

// timelineLimit is how many events of a room one sync may carry: a
// homeserver's default (Dendrite's is 20) would drop the older ones of a
// busy room, or of a room that talked while omega was away.
const timelineLimit = 1000

// syncFilter asks for long room timelines and leaves presence out; the
// first sync only needs its position and the invites.
var syncFilter = map[bool]string{
	false: `{"presence":{"types":[]},"room":{"timeline":{"limit":` + strconv.Itoa(timelineLimit) + `}}}`,
	true:  `{"presence":{"types":[]},"room":{"timeline":{"limit":1}}}`,
}

// Sync waits up to timeout for events after since ("": the first sync).
func (c *Client) Sync(ctx context.Context, since string, timeout time.Duration) (*SyncResponse, error) {
	q := url.Values{"timeout": {strconv.FormatInt(timeout.Milliseconds(), 10)}, "filter": {syncFilter[since == ""]}}
	if since != "" {
		q.Set("since", since)
	}
	var out SyncResponse
	if err := c.do(ctx, http.MethodGet, "/_matrix/client/v3/sync", q, nil, "", &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Join joins a room the account was invited to.
func (c *Client) Join(ctx context.Context, roomID string) error {
	return c.do(ctx, http.MethodPost, "/_matrix/client/v3/rooms/"+url.PathEscape(roomID)+"/join", nil, struct{}{}, "", nil)
}

// Leave leaves a room, or rejects an invite to it.
func (c *Client) Leave(ctx context.Context, roomID, reason string) error {
	return c.do(ctx, http.MethodPost, "/_matrix/client/v3/rooms/"+url.PathEscape(roomID)+"/leave", nil, map[string]string{"reason": reason}, "", nil)
}

// JoinedMembers counts a room's joined members.
func (c *Client) JoinedMembers(ctx context.Context, roomID string) (int, error) {
	var out struct {
		Joined map[string]json.RawMessage `json:"joined"`
	}
	err := c.do(ctx, http.MethodGet, "/_matrix/client/v3/rooms/"+url.PathEscape(roomID)+"/joined_members", nil, nil, "", &out)
	return len(out.Joined), err
}

// NewTxn is a transaction id; a send retried with the same one is taken
// once.
func (c *Client) NewTxn() string { return c.txnPre + "." + strconv.FormatInt(c.txn.Add(1), 10) }

// SendMessage sends an m.room.message; a retry with the same txn is
// taken once. It returns the event id.
func (c *Client) SendMessage(ctx context.Context, roomID, txn string, content any) (string, error) {
	var out struct {
		EventID string `json:"event_id"`
	}
	path := "/_matrix/client/v3/rooms/" + url.PathEscape(roomID) + "/send/m.room.message/" + url.PathEscape(txn)
	err := c.do(ctx, http.MethodPut, path, nil, content, "", &out)
	return out.EventID, err
}

// Typing shows the account typing in a room for d.
func (c *Client) Typing(ctx context.Context, roomID string, d time.Duration) error {
	path := "/_matrix/client/v3/rooms/" + url.PathEscape(roomID) + "/typing/" + c.userPath()
	return c.do(ctx, http.MethodPut, path, nil, map[string]any{"typing": true, "timeout": d.Milliseconds()}, "", nil)
}

// Upload puts data in the media repository and returns its mxc:// URI.
func (c *Client) Upload(ctx context.Context, data []byte, mime, name string) (string, error) {
	var out struct {
		ContentURI string `json:"content_uri"`
	}
	err := c.do(ctx, http.MethodPost, "/_matrix/media/v3/upload", url.Values{"filename": {name}}, data, mime, &out)
	return out.ContentURI, err
}

// Download fetches mxc://server/id through the authenticated media API.
func (c *Client) Download(ctx context.Context, mxc string) ([]byte, error) {
	server, mediaID, ok := strings.Cut(strings.TrimPrefix(mxc, "mxc://"), "/")
	if !strings.HasPrefix(mxc, "mxc://") || !ok || server == "" || mediaID == "" {
		return nil, fmt.Errorf("not an mxc:// URI: %q", mxc)
	}
	var data []byte
	path := "/_matrix/client/v1/media/download/" + url.PathEscape(server) + "/" + url.PathEscape(mediaID)
	err := c.do(ctx, http.MethodGet, path, nil, nil, "", &data)
	return data, err
}

// Versions lists the spec versions the homeserver speaks.
func (c *Client) Versions(ctx context.Context) ([]string, error) {
	var out struct {
		Versions []string `json:"versions"`
	}
	err := c.do(ctx, http.MethodGet, "/_matrix/client/versions", nil, nil, "", &out)
	return out.Versions, err
}

// Whoami is the user id the token belongs to.
func (c *Client) Whoami(ctx context.Context) (string, error) {
	var out struct {
		UserID string `json:"user_id"`
	}
	err := c.do(ctx, http.MethodGet, "/_matrix/client/v3/account/whoami", nil, nil, "", &out)
	return out.UserID, err
}

// EventSender is who sent an event of the room.
func (c *Client) EventSender(ctx context.Context, roomID, eventID string) (string, error) {
	var out struct {
		Sender string `json:"sender"`
	}
	path := "/_matrix/client/v3/rooms/" + url.PathEscape(roomID) + "/event/" + url.PathEscape(eventID)
	err := c.do(ctx, http.MethodGet, path, nil, nil, "", &out)
	return out.Sender, err
}

// DirectRoom finds a joined room that m.direct lists for user, or
// creates one, invites user and lists it there.
func (c *Client) DirectRoom(ctx context.Context, user string) (string, error) {
	direct := map[string][]string{}
	path := "/_matrix/client/v3/user/" + c.userPath() + "/account_data/m.direct"
	err := c.do(ctx, http.MethodGet, path, nil, nil, "", &direct)
	if ae := (*Error)(nil); errors.As(err, &ae) && ae.Status == http.StatusNotFound {
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
