package matrixtest

import "testing"

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
