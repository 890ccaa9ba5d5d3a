package matrixtest

import (
	"net"
	"testing"

	"github.com/omega-gateway/omega/internal/freeport"
)

// The kit starts a homeserver, registers people, and carries a message
// from one to the other across a restart.
func TestDendrite(t *testing.T) {
	d := Start(t)
	alice, bob := d.Register(t, "alice"), d.Register(t, "bob")
	if alice.ID != "@alice:localhost" {
		t.Fatalf("registered %q", alice.ID)
	}
	room := alice.CreateRoom(t, false, bob.ID)
	bob.Join(t, room)
	id := alice.SendText(t, room, "hello bob")
	d.Restart(t)
	msgs, ids := bob.Messages(t, room, alice.ID)
	if len(msgs) != 1 || msgs[0].Body != "hello bob" || ids[0] != id {
		t.Fatalf("bob sees %+v %q", msgs, ids)
	}
	if got := alice.Membership(t, room, bob.ID); got != "join" {
		t.Fatalf("bob's membership %q", got)
	}
}

// A port another process takes between its choice and Dendrite's bind
// costs a second start on a fresh port, not the test.
func TestStartRetriesWhenThePortIsTaken(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	var calls int
	d := start(t, func(t testing.TB) string {
		calls++
		if calls == 1 {
			return taken.Addr().String()
		}
		return freeport.Addr(t)
	})
	if calls != 2 || d.addr == taken.Addr().String() {
		t.Fatalf("port chosen %d times, now %s (the first, %s, was taken)", calls, d.addr, taken.Addr())
	}
	if alice := d.Register(t, "alice"); alice.ID != "@alice:localhost" {
		t.Fatalf("registered %q on the retried start", alice.ID)
	}
}
