package messaging

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/ThreeDotsLabs/watermill"
	wsql "github.com/ThreeDotsLabs/watermill-sql/v3/pkg/sql"
)

// quietOnStop keeps watermill-sql's backoff but does not report a query
// cut off by shutdown: the default logs it as "ERROR Error querying for
// message ... context canceled" on every ordinary stop. The subscriber's
// loop sees the cancelled context next and returns.
type quietOnStop struct{ next wsql.BackoffManager }

func (q quietOnStop) HandleError(logger watermill.LoggerAdapter, noMsg bool, err error) time.Duration {
	if stopped(err) {
		return 0
	}
	return q.next.HandleError(logger, noMsg, err)
}

// cancelledByUs reports a statement PostgreSQL cancelled at the client's
// request: lib/pq sends that request only when the query's context is
// cancelled, and then returns the server's answer (SQLSTATE 57014,
// "canceling statement due to user request") rather than the context's
// error. A statement timeout has the same code and another message.
func cancelledByUs(err error) bool {
	var coded interface {
		SQLState() string
		Error() string
	}
	return errors.As(err, &coded) && coded.SQLState() == "57014" && strings.Contains(coded.Error(), "user request")
}

// stopQuiet is the subscriber's logger with the errors of a stop moved
// to debug. A stop cancels the subscriber's transaction: its commit fails
// when a message was in flight ("could not commit tx for querying message
// ... context canceled"), and when a query was cut off, lib/pq may leave
// the connection unusable so that the rollback fails ("driver: bad
// connection"). Nothing is lost (the transaction never committed, the
// message stays for the next process, which sees a command's outcome and
// skips it); an error logged on such stops would hide real ones.
type stopQuiet struct{ watermill.LoggerAdapter }

func (l stopQuiet) Error(msg string, err error, fields watermill.LogFields) {
	q, _ := fields["query_err"].(error)
	if stopped(q) || stopped(err) {
		l.Debug(msg, fields.Add(watermill.LogFields{"err": err}))
		return
	}
	l.LoggerAdapter.Error(msg, err, fields)
}

// stopped reports an error that only a stop causes.
func stopped(err error) bool {
	return err != nil && (errors.Is(err, context.Canceled) || cancelledByUs(err))
}

func (l stopQuiet) With(fields watermill.LogFields) watermill.LoggerAdapter {
	return stopQuiet{l.LoggerAdapter.With(fields)}
}
