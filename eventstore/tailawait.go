package eventstore

import "time"

// awaitedCommit is an own commit the Tail has not read yet.
type awaitedCommit struct {
	at     time.Time // when it was committed
	stream string
}

// ReadOf returns a channel closed once the Tail no longer awaits the own
// commit on stream it awaits (SetAwaited): it has read it, given up on it
// (after tailAwaitFor), or dropped its window. It is nil when the Tail
// awaits no commit on stream. A follower waiting for one commit's place
// in the log waits on it alone, rather than look again at every read of
// the log: with a thousand messages waiting, looking at each on every
// read made a turn cost in proportion to the messages waiting.
func (t *Tail) ReadOf(stream string) <-chan struct{} {
	t.mu.Lock()
	defer t.mu.Unlock()
	pos, ok := t.awaitedOn[stream]
	if !ok {
		return nil
	}
	ch, ok := t.readers[pos]
	if !ok {
		ch = make(chan struct{})
		t.readers[pos] = ch
	}
	return ch
}

// settleLocked ends the wait for the awaited commit at pos; the caller
// holds mu.
func (t *Tail) settleLocked(pos int64) {
	c, ok := t.awaited[pos]
	if !ok {
		return
	}
	delete(t.awaited, pos)
	if t.awaitedOn[c.stream] == pos {
		delete(t.awaitedOn, c.stream)
	}
	if ch, ok := t.readers[pos]; ok {
		close(ch)
		delete(t.readers, pos)
	}
}
