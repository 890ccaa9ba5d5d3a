package messaging

import (
	"context"
	"errors"
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
	if errors.Is(err, context.Canceled) {
		return 0
	}
	return q.next.HandleError(logger, noMsg, err)
}
