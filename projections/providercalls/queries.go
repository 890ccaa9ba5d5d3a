package providercalls

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/omega-gateway/omega/domain/budget"
	"github.com/omega-gateway/omega/projections/readmodel"
)

// Queries reads the provider calls read model: the spend ledger the
// budget guard decides on and the usage reports.
type Queries struct {
	db *sql.DB
}

// NewQueries returns the queries on db.
func NewQueries(db *sql.DB) (*Queries, error) {
	if db == nil {
		return nil, errors.New("providercalls: queries need a database")
	}
	return &Queries{db: db}, nil
}

// Ledger is what a budget decision counts: spend this day and this
// month, everything's and the sender's, the month's largest call and
// the calls in the runaway window, the sender's and the loop's; through
// position Through of the log.
type Ledger struct {
	Through          int64
	AllDay, AllMonth budget.Spend
	SenderDay        budget.Spend
	SenderMonth      budget.Spend
	Largest          budget.Spend // the largest call this month, by unit
	SenderWindow     int64        // the sender's calls in the window
	LoopWindow       int64        // the loop's calls in the window
}

// Call is one provider call as the read model keeps it.
type Call struct {
	Position int64
	At       time.Time
	Purpose  string
	Sender   string
	Model    string
	Failed   bool
	Tokens   int64
	USD      float64
}

// Calls lists the calls recorded in [since, until) (a zero until is no
// end), oldest first, of one purpose and one sender where they are given.
func (q *Queries) Calls(ctx context.Context, since, until time.Time, purpose, sender string) ([]Call, error) {
	end := int64(1) << 62
	if !until.IsZero() {
		end = until.UnixMicro()
	}
	rows, err := q.db.QueryContext(ctx, `SELECT position, at, purpose, sender, model, failed, input_tokens + output_tokens, cost_usd
		FROM provider_calls WHERE at >= $1 AND at < $2 AND ($3 = '' OR purpose = $3) AND ($4 = '' OR sender = $4)
		ORDER BY at, position`, since.UnixMicro(), end, purpose, sender)
	if err != nil {
		return nil, fmt.Errorf("read provider calls: %w", err)
	}
	defer rows.Close()
	var out []Call
	for rows.Next() {
		var c Call
		var at int64
		var failed int
		if err := rows.Scan(&c.Position, &at, &c.Purpose, &c.Sender, &c.Model, &failed, &c.Tokens, &c.USD); err != nil {
			return nil, fmt.Errorf("scan provider calls: %w", err)
		}
		c.At, c.Failed = time.UnixMicro(at).UTC(), failed != 0
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read provider calls: %w", err)
	}
	return out, nil
}

// Snapshot is what the read model had summed for a budget's periods
// when it had applied the log through Through: each sender's spend
// ("" is omega's own calls) this day and this month, the month's largest
// call, and the calls since the runaway window's start.
type Snapshot struct {
	Through int64
	Senders map[string]PeriodSpend
	Largest budget.Spend
	Recent  []Recent
}

// PeriodSpend is what was spent this day and this month.
type PeriodSpend struct {
	Day, Month budget.Spend
}

// Recent is one call in the runaway window.
type Recent struct {
	At              time.Time
	Sender, Purpose string
}

// snapshotSQL reads, in one statement (one snapshot, so the sums and
// the checkpoint agree), the month's sums by sender and the window's
// calls one by one.
var snapshotSQL = `SELECT c.position, g.kind, g.sender, g.purpose, g.at,
	g.day_tokens, g.day_usd, g.day_calls, g.month_tokens, g.month_usd, g.month_calls, g.max_tokens, g.max_usd
	FROM checkpoints c LEFT JOIN (
		SELECT 0 AS kind, sender, '' AS purpose, 0 AS at,
			COALESCE(SUM(CASE WHEN at >= $2 THEN input_tokens + output_tokens END), 0) AS day_tokens,
			COALESCE(SUM(CASE WHEN at >= $2 THEN cost_usd END), 0) AS day_usd,
			COALESCE(SUM(CASE WHEN at >= $2 THEN 1 END), 0) AS day_calls,
			COALESCE(SUM(input_tokens + output_tokens), 0) AS month_tokens, COALESCE(SUM(cost_usd), 0) AS month_usd,
			COUNT(*) AS month_calls, COALESCE(MAX(input_tokens + output_tokens), 0) AS max_tokens, COALESCE(MAX(cost_usd), 0) AS max_usd
			FROM provider_calls WHERE at >= $3 GROUP BY sender
		UNION ALL
		SELECT 1, sender, purpose, at, 0, 0, 0, 0, 0, 0, 0, 0 FROM provider_calls WHERE at >= $4
	) g ON 1 = 1
	WHERE c.name = $1`

// Snapshot reads the sums since month (day's within them) and the calls
// since window; a read model not created yet is a snapshot through 0.
func (q *Queries) Snapshot(ctx context.Context, day, month, window time.Time) (Snapshot, error) {
	rows, err := q.db.QueryContext(ctx, snapshotSQL, readmodel.CheckpointName(ReadModel{}), day.UnixMicro(), month.UnixMicro(), window.UnixMicro())
	if err != nil {
		return Snapshot{}, fmt.Errorf("read the spend ledger: %w", err)
	}
	defer rows.Close()
	s := Snapshot{Senders: map[string]PeriodSpend{}}
	for rows.Next() {
		var kind sql.NullInt64
		var sender, purpose sql.NullString
		var at, dt, dc, mt, mc, xt sql.NullInt64
		var du, mu, xu sql.NullFloat64
		if err := rows.Scan(&s.Through, &kind, &sender, &purpose, &at, &dt, &du, &dc, &mt, &mu, &mc, &xt, &xu); err != nil {
			return Snapshot{}, fmt.Errorf("scan the spend ledger: %w", err)
		}
		switch {
		case !kind.Valid:
		case kind.Int64 == 0:
			s.Senders[sender.String] = PeriodSpend{Day: budget.Spend{Tokens: dt.Int64, USD: du.Float64, Calls: dc.Int64},
				Month: budget.Spend{Tokens: mt.Int64, USD: mu.Float64, Calls: mc.Int64}}
			s.Largest = s.Largest.Max(budget.Spend{Tokens: xt.Int64, USD: xu.Float64})
		default:
			s.Recent = append(s.Recent, Recent{At: time.UnixMicro(at.Int64).UTC(), Sender: sender.String, Purpose: purpose.String})
		}
	}
	if err := rows.Err(); err != nil {
		return Snapshot{}, fmt.Errorf("read the spend ledger: %w", err)
	}
	return s, nil
}
