package messaging

import (
	"errors"

	"github.com/ThreeDotsLabs/watermill/message"
)

// stoppingError is a handler's error that came with its message's context
// ended: the process is stopping, so the message goes unacknowledged to
// the next process (a command) or to this one after its restart (an
// event). It is no failure of the message.
type stoppingError struct{ error }

func (e stoppingError) Unwrap() error { return e.error }

// markStopping tells a handler cut off by its process stopping from one
// that failed: only the second belongs in the poison queue, where a
// command's sender would read "context canceled" as its command's fate
// and an event would be skipped for good.
func markStopping(h message.HandlerFunc) message.HandlerFunc {
	return func(msg *message.Message) ([]*message.Message, error) {
		out, err := h(msg)
		if err != nil && msg.Context().Err() != nil {
			return out, stoppingError{err}
		}
		return out, err
	}
}

// failedForGood says whether a handler's final error goes to the poison
// queue.
func failedForGood(err error) bool {
	var stopping stoppingError
	return !errors.As(err, &stopping)
}
