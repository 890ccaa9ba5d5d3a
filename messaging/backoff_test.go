package messaging

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/ThreeDotsLabs/watermill"
	wsql "github.com/ThreeDotsLabs/watermill-sql/v3/pkg/sql"
	"github.com/lib/pq"
)

func TestQuietOnStop(t *testing.T) {
	log := watermill.NewCaptureLogger()
	b := quietOnStop{wsql.NewDefaultBackoffManager(time.Second, time.Second)}
	b.HandleError(log, false, fmt.Errorf("could not begin tx for querying: %w", context.Canceled))
	b.HandleError(log, false, fmt.Errorf("could not query message: %w", &pq.Error{Code: "57014", Message: "canceling statement due to user request"}))
	if len(log.Captured()[watermill.ErrorLogLevel]) != 0 {
		t.Fatalf("a stop was logged as an error: %+v", log.Captured())
	}
	if d := b.HandleError(log, false, &pq.Error{Code: "57014", Message: "canceling statement due to statement timeout"}); d != time.Second || len(log.Captured()[watermill.ErrorLogLevel]) != 1 {
		t.Fatalf("a statement timeout was not reported with its backoff: %v %+v", d, log.Captured())
	}
	if d := b.HandleError(log, false, errors.New("connection refused")); d != time.Second || len(log.Captured()[watermill.ErrorLogLevel]) != 2 {
		t.Fatalf("a real failure was not reported with its backoff: %v %+v", d, log.Captured())
	}
}
