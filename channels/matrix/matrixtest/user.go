package matrixtest

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha1" //nolint:gosec // the shared-secret registration API is defined with HMAC-SHA1
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"sync/atomic"
	"testing"
	"time"
)

// User is a registered account, driven as a person's client would.
type User struct {
	ID    string // @name:localhost
	Token string
	d     *Dendrite
}

// Password is every test user's password.
const Password = "matrixtest-pw"

// Register creates the user through the shared-secret registration API.
func (d *Dendrite) Register(t *testing.T, name string) *User {
	t.Helper()
	var nonce struct {
		Nonce string `json:"nonce"`
	}
	call(t, d.URL, "", http.MethodGet, "/_synapse/admin/v1/register", nil, &nonce)
	mac := hmac.New(sha1.New, []byte(sharedSecret))
	mac.Write([]byte(nonce.Nonce + "\x00" + name + "\x00" + Password + "\x00notadmin"))
	var out struct {
		UserID      string `json:"user_id"`
		AccessToken string `json:"access_token"`
	}
	call(t, d.URL, "", http.MethodPost, "/_synapse/admin/v1/register", map[string]any{
		"nonce": nonce.Nonce, "username": name, "password": Password, "admin": false, "mac": hex.EncodeToString(mac.Sum(nil)),
	}, &out)
	return &User{ID: out.UserID, Token: out.AccessToken, d: d}
}

// CreateRoom creates a private room inviting others; encrypted turns on
// end-to-end encryption from the start.
func (u *User) CreateRoom(t *testing.T, encrypted bool, invite ...string) string {
	t.Helper()
	req := map[string]any{"preset": "private_chat", "invite": invite, "is_direct": len(invite) == 1}
	if encrypted {
		req["initial_state"] = []map[string]any{{"type": "m.room.encryption", "state_key": "", "content": map[string]any{"algorithm": "m.megolm.v1.aes-sha2"}}}
	}
	var out struct {
		RoomID string `json:"room_id"`
	}
	u.call(t, http.MethodPost, "/_matrix/client/v3/createRoom", req, &out)
	return out.RoomID
}

// Join joins a room the user was invited to.
func (u *User) Join(t *testing.T, roomID string) {
	t.Helper()
	u.call(t, http.MethodPost, "/_matrix/client/v3/rooms/"+url.PathEscape(roomID)+"/join", map[string]any{}, nil)
}

var txn atomic.Int64

// Send sends content as an event of type typ and returns its id.
func (u *User) Send(t *testing.T, roomID, typ string, content any) string {
	t.Helper()
	var out struct {
		EventID string `json:"event_id"`
	}
	path := "/_matrix/client/v3/rooms/" + url.PathEscape(roomID) + "/send/" + typ + "/t" + strconv.FormatInt(txn.Add(1), 10)
	u.call(t, http.MethodPut, path, content, &out)
	return out.EventID
}

// SendText sends a plain m.text message.
func (u *User) SendText(t *testing.T, roomID, text string) string {
	t.Helper()
	return u.Send(t, roomID, "m.room.message", map[string]any{"msgtype": "m.text", "body": text})
}

// Mention sends a message that mentions userID, as Element does.
func (u *User) Mention(t *testing.T, roomID, userID, text string) string {
	t.Helper()
	return u.Send(t, roomID, "m.room.message", map[string]any{
		"msgtype": "m.text", "body": userID + ": " + text,
		"format": "org.matrix.custom.html", "formatted_body": `<a href="https://matrix.to/#/` + userID + `">bot</a>: ` + text,
		"m.mentions": map[string]any{"user_ids": []string{userID}},
	})
}

// Reply sends text as a reply to the event replyTo.
func (u *User) Reply(t *testing.T, roomID, replyTo, text string) string {
	t.Helper()
	return u.Send(t, roomID, "m.room.message", map[string]any{
		"msgtype": "m.text", "body": "> <someone> quoted\n\n" + text,
		"m.relates_to": map[string]any{"m.in_reply_to": map[string]any{"event_id": replyTo}},
	})
}

// SendImage uploads data and sends it as m.image, with a caption unless
// it is empty.
func (u *User) SendImage(t *testing.T, roomID, name, mime string, data []byte, caption string) string {
	t.Helper()
	var up struct {
		ContentURI string `json:"content_uri"`
	}
	req, err := http.NewRequest(http.MethodPost, u.d.URL+"/_matrix/media/v3/upload?filename="+url.QueryEscape(name), bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", mime)
	do(t, req, u.Token, &up)
	content := map[string]any{"msgtype": "m.image", "body": name, "url": up.ContentURI, "info": map[string]any{"mimetype": mime, "size": len(data)}}
	if caption != "" {
		content["body"], content["filename"] = caption, name
	}
	return u.Send(t, roomID, "m.room.message", content)
}

// Event is a room event as /messages returns it.
type Event struct {
	Type    string          `json:"type"`
	EventID string          `json:"event_id"`
	Sender  string          `json:"sender"`
	Content json.RawMessage `json:"content"`
}

// Message is an m.room.message's content.
type Message struct {
	MsgType       string `json:"msgtype"`
	Body          string `json:"body"`
	Format        string `json:"format"`
	FormattedBody string `json:"formatted_body"`
	URL           string `json:"url"`
	Info          struct {
		MimeType string `json:"mimetype"`
	} `json:"info"`
	RelatesTo struct {
		RelType string `json:"rel_type"`
		EventID string `json:"event_id"`
	} `json:"m.relates_to"`
	NewContent *Message `json:"m.new_content"`
}

// SyncWait bounds how long a reader waits for the homeserver to show
// what it took. After a crash (Kill), Dendrite's sync API gets an event
// that was in flight again only when JetStream's ack wait of 30 s has
// run out, and it takes its one queue in order, so everything sent
// meanwhile shows only after that.
const SyncWait = 90 * time.Second

// barrierType is an event type no client shows and omega ignores.
const barrierType = "org.omega.matrixtest.barrier"

// Messages returns the m.room.message events sender sent to the room,
// oldest first, with their event ids: everything the homeserver took
// before the call. Dendrite's read side follows its room server
// asynchronously, in order; so the user sends a barrier event of its own
// and reads once the barrier shows.
func (u *User) Messages(t *testing.T, roomID, sender string) ([]Message, []string) {
	t.Helper()
	barrier := u.Send(t, roomID, barrierType, map[string]any{})
	var out struct {
		Chunk []Event `json:"chunk"`
	}
	for deadline := time.Now().Add(SyncWait); ; time.Sleep(20 * time.Millisecond) {
		u.call(t, http.MethodGet, "/_matrix/client/v3/rooms/"+url.PathEscape(roomID)+"/messages?dir=b&limit=1000", nil, &out)
		if slices.ContainsFunc(out.Chunk, func(e Event) bool { return e.EventID == barrier }) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("matrixtest: the homeserver never showed the barrier %s in %s", barrier, roomID)
		}
	}
	var msgs []Message
	var ids []string
	for i := len(out.Chunk) - 1; i >= 0; i-- {
		e := out.Chunk[i]
		if e.Type != "m.room.message" || e.Sender != sender {
			continue
		}
		var m Message
		if err := json.Unmarshal(e.Content, &m); err != nil {
			t.Fatal(err)
		}
		msgs, ids = append(msgs, m), append(ids, e.EventID)
	}
	return msgs, ids
}

// Membership is userID's membership of the room ("join", "invite",
// "leave", or "" when none).
func (u *User) Membership(t *testing.T, roomID, userID string) string {
	t.Helper()
	var out struct {
		Membership string `json:"membership"`
	}
	req, err := http.NewRequest(http.MethodGet, u.d.URL+"/_matrix/client/v3/rooms/"+url.PathEscape(roomID)+"/state/m.room.member/"+url.PathEscape(userID), nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+u.Token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode == http.StatusNotFound {
		return ""
	}
	_ = json.NewDecoder(resp.Body).Decode(&out)
	return out.Membership
}

// Download fetches an mxc:// URI's bytes.
func (u *User) Download(t *testing.T, mxc string) []byte {
	t.Helper()
	u2, err := url.Parse(mxc)
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequest(http.MethodGet, u.d.URL+"/_matrix/client/v1/media/download/"+u2.Host+u2.Path, nil)
	if err != nil {
		t.Fatal(err)
	}
	var data []byte
	do(t, req, u.Token, &data)
	return data
}

func (u *User) call(t *testing.T, method, path string, body, out any) {
	t.Helper()
	call(t, u.d.URL, u.Token, method, path, body, out)
}

func call(t *testing.T, base, token, method, path string, body, out any) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		data, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		rd = bytes.NewReader(data)
	}
	req, err := http.NewRequest(method, base+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	do(t, req, token, out)
}

var httpClient = &http.Client{Timeout: 30 * time.Second}

func do(t *testing.T, req *http.Request, token string, out any) {
	t.Helper()
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := httpClient.Do(req)
	if err != nil {
		t.Fatalf("matrixtest: %s %s: %v", req.Method, req.URL.Path, err)
	}
	defer func() { _ = resp.Body.Close() }()
	data, _ := io.ReadAll(resp.Body)
	if resp.StatusCode/100 != 2 {
		t.Fatalf("matrixtest: %s %s: HTTP %d: %s", req.Method, req.URL.Path, resp.StatusCode, data)
	}
	if raw, ok := out.(*[]byte); ok {
		*raw = data
		return
	}
	if out != nil {
		if err := json.Unmarshal(data, out); err != nil {
			t.Fatalf("matrixtest: %s %s: %v: %s", req.Method, req.URL.Path, err, data)
		}
	}
}

// String names the user in failures.
func (u *User) String() string { return u.ID }

// SyncToken is the user's current /sync position: a client starting
// from it sees only what happens afterwards.
func (u *User) SyncToken(t *testing.T) string {
	t.Helper()
	var out struct {
		NextBatch string `json:"next_batch"`
	}
	u.call(t, http.MethodGet, "/_matrix/client/v3/sync?timeout=0", nil, &out)
	return out.NextBatch
}

// Leave leaves a room.
func (u *User) Leave(t *testing.T, roomID string) {
	t.Helper()
	u.call(t, http.MethodPost, "/_matrix/client/v3/rooms/"+url.PathEscape(roomID)+"/leave", map[string]any{}, nil)
}

// Typing lists who is typing in the room now, as the user's client sees
// it.
func (u *User) Typing(t *testing.T, roomID string) []string {
	t.Helper()
	var out struct {
		Rooms struct {
			Join map[string]struct {
				Ephemeral struct {
					Events []struct {
						Type    string `json:"type"`
						Content struct {
							UserIDs []string `json:"user_ids"`
						} `json:"content"`
					} `json:"events"`
				} `json:"ephemeral"`
			} `json:"join"`
		} `json:"rooms"`
	}
	u.call(t, http.MethodGet, "/_matrix/client/v3/sync?timeout=0", nil, &out)
	for _, e := range out.Rooms.Join[roomID].Ephemeral.Events {
		if e.Type == "m.typing" {
			return e.Content.UserIDs
		}
	}
	return nil
}

// Visible returns the messages sender shows in the room, oldest first,
// each as last edited (m.replace).
func (u *User) Visible(t *testing.T, roomID, sender string) []Message {
	t.Helper()
	msgs, ids := u.Messages(t, roomID, sender)
	var out []Message
	index := map[string]int{}
	for i, m := range msgs {
		if m.RelatesTo.RelType == "m.replace" && m.NewContent != nil {
			if j, ok := index[m.RelatesTo.EventID]; ok {
				out[j] = *m.NewContent
			}
			continue
		}
		index[ids[i]] = len(out)
		out = append(out, m)
	}
	return out
}
