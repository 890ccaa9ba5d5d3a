package live

import "testing"

func TestHubShowsTheLatestTextToWatchers(t *testing.T) {
	h := NewHub(0)
	early := h.Subscribe("t1") // before the turn streams
	defer early.Close()
	h.Publish("t1", "Hello", "")
	// A watcher that does not read is not waited for: later texts
	// replace what it has not read.
	for _, text := range []string{"Hello there", "Hello there, friend"} {
		h.Publish("t1", text, "")
	}
	late := h.Subscribe("t1")
	defer late.Close()
	if got := late.Snapshot().Text; got != "Hello there, friend" {
		t.Errorf("a watcher that comes late sees %q, want the text so far", got)
	}
	<-early.C()
	if got := early.Snapshot().Text; got != "Hello there, friend" {
		t.Errorf("a slow watcher reads %q, want the latest text", got)
	}
	select {
	case <-early.C():
		t.Error("one wake-up per read expected, not one per piece")
	default:
	}
	h.End("t1")
	<-late.C()
	if !late.Snapshot().Done {
		t.Error("the end of the stream is not shown")
	}
	if len(h.turns) != 0 {
		t.Errorf("the hub keeps %d turns after their streams ended", len(h.turns))
	}
}

func TestHubIsBounded(t *testing.T) {
	h := NewHub(2)
	h.Publish("a", "x", "")
	h.Publish("b", "y", "")
	h.Publish("c", "z", "")
	s := h.Subscribe("c")
	defer s.Close()
	if got := s.Snapshot(); got != (Snapshot{}) || len(h.turns) != 2 {
		t.Errorf("a full hub took a third turn: %+v, %d turns", got, len(h.turns))
	}
	idle := h.Subscribe("a")
	idle.Close()
	h.End("a")
	h.End("b")
	quiet := h.Subscribe("never-streams")
	quiet.Close()
	if len(h.turns) != 0 {
		t.Errorf("the hub keeps %d turns nobody streams or watches", len(h.turns))
	}
}
