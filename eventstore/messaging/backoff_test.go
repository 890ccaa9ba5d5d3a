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

// The rollback that fails after a stop cancelled the subscriber's query,
// and the commit a stop cancelled, are debug, also through a logger
// derived with With; any other failed rollback or commit stays an error.
func TestStopQuiet(t *testing.T) {
	capture := watermill.NewCaptureLogger()
	log := stopQuiet{capture}.With(watermill.LogFields{"subscriber_id": "s"})
	badConn := errors.New("driver: bad connection")
	log.Error("could not rollback tx for querying message", badConn,
		watermill.LogFields{"query_err": fmt.Errorf("could not query message: %w", context.Canceled)})
	log.Error("could not rollback tx for querying message", badConn,
		watermill.LogFields{"query_err": fmt.Errorf("could not query message: %w", &pq.Error{Code: "57014", Message: "canceling statement due to user request"})})
	log.Error("could not commit tx for querying message", context.Canceled, nil)
	if n := len(capture.Captured()[watermill.ErrorLogLevel]); n != 0 {
		t.Fatalf("a stop was logged as %d error(s): %+v", n, capture.Captured())
	}
	if n := len(capture.Captured()[watermill.DebugLogLevel]); n != 3 {
		t.Fatalf("%d debug lines, want 3: %+v", n, capture.Captured())
	}
	log.Error("could not rollback tx for querying message", badConn, watermill.LogFields{"query_err": errors.New("disk full")})
	log.Error("could not commit tx for querying message", badConn, nil)
	log.Error("something else", badConn, nil)
	if n := len(capture.Captured()[watermill.ErrorLogLevel]); n != 3 {
		t.Fatalf("%d errors logged, want the 3 that were not a stop: %+v", n, capture.Captured())
	}
}
