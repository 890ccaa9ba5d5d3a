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
	if errors.Is(err, context.Canceled) || cancelledByUs(err) {
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
