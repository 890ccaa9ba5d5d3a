package exchanges

import (
	"fmt"
	"testing"
)

// A set keeps the latest exchanges of each chat and of all, forgets the
// ones the read model shows, and a nil set holds none.
func TestSetBounds(t *testing.T) {
	s := NewSet()
	for i := range maxKeptForChat + 1 {
		s.add(Exchange{Turn: fmt.Sprint("a", i), Chat: "ana"})
	}
	if s.Holds("a0") || !s.Holds("a1") || len(s.Chat("ana")) != maxKeptForChat {
		t.Fatalf("a chat keeps %d exchanges, holds the oldest %v; want %d, not the oldest", len(s.Chat("ana")), s.Holds("a0"), maxKeptForChat)
	}
	for i := range maxKept {
		s.add(Exchange{Turn: fmt.Sprint("b", i), Chat: fmt.Sprint("chat", i)})
	}
	if len(s.Chat("ana")) != 0 || !s.Holds(fmt.Sprint("b", maxKept-1)) || len(s.order) != maxKept {
		t.Fatalf("after %d more: ana keeps %d, %d in all", maxKept, len(s.Chat("ana")), len(s.order))
	}
	s.Applied([]string{"b5", "b6"})
	if s.Holds("b5") || s.Holds("b6") || len(s.Chat("chat5")) != 0 || len(s.order) != maxKept-2 {
		t.Fatalf("applied exchanges still kept")
	}
	var none *Set
	if none.Holds("b7") || none.Chat("chat7") != nil {
		t.Fatal("a nil set holds exchanges")
	}
	none.Applied([]string{"x"})
}
