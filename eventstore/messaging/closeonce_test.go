package messaging

import (
	"context"
	"sync"
	"testing"

	"github.com/ThreeDotsLabs/watermill/message"
)

// countingSubscriber panics on a second Close, as watermill-sql's does.
type countingSubscriber struct {
	closing chan struct{}
}

func (s *countingSubscriber) Subscribe(context.Context, string) (<-chan *message.Message, error) {
	return nil, nil
}

func (s *countingSubscriber) Close() error {
	close(s.closing) // a second call panics
	return nil
}

// Every command handler closes the subscriber they share when the router
// stops, all at once; it is closed once.
func TestSharedSubscriberClosesOnce(t *testing.T) {
	sub := &closeOnce{Subscriber: &countingSubscriber{closing: make(chan struct{})}}
	var wg sync.WaitGroup
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := sub.Close(); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
}
