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

// LedgerAsk is what a budget decision needs summed: since when (the day's
// and the month's start in the owner's time zone, and the runaway
// window's start), for which sender and which loop.
type LedgerAsk struct {
	Day, Month, Window time.Time
	Sender             string // "" sums no sender
	Loop               string // a purpose: omega's own calls of it in the window
}

// Ledger is what the read model had summed when it had applied the log
// through position Through.
type Ledger struct {
	Through          int64
	AllDay, AllMonth budget.Spend
	SenderDay        budget.Spend
	SenderMonth      budget.Spend
	Largest          budget.Spend // the largest call this month, by unit
	SenderWindow     int64        // the sender's calls in the window
	LoopWindow       int64        // the loop's calls in the window
}

// ledgerSQL sums everything in one statement, so the sums and the
// checkpoint are of one snapshot: the guard adds what the log holds after
// Through and the total is exact however far the read model lags.
var ledgerSQL = `SELECT c.position,
	COALESCE(SUM(CASE WHEN p.at >= $2 THEN p.input_tokens + p.output_tokens END), 0),
	COALESCE(SUM(CASE WHEN p.at >= $2 THEN p.cost_usd END), 0),
	COALESCE(SUM(CASE WHEN p.at >= $2 THEN 1 END), 0),
	COALESCE(SUM(CASE WHEN p.at >= $3 THEN p.input_tokens + p.output_tokens END), 0),
	COALESCE(SUM(CASE WHEN p.at >= $3 THEN p.cost_usd END), 0),
	COALESCE(SUM(CASE WHEN p.at >= $3 THEN 1 END), 0),
	COALESCE(SUM(CASE WHEN p.at >= $2 AND p.sender = $5 THEN p.input_tokens + p.output_tokens END), 0),
	COALESCE(SUM(CASE WHEN p.at >= $2 AND p.sender = $5 THEN p.cost_usd END), 0),
	COALESCE(SUM(CASE WHEN p.at >= $2 AND p.sender = $5 THEN 1 END), 0),
	COALESCE(SUM(CASE WHEN p.at >= $3 AND p.sender = $5 THEN p.input_tokens + p.output_tokens END), 0),
	COALESCE(SUM(CASE WHEN p.at >= $3 AND p.sender = $5 THEN p.cost_usd END), 0),
	COALESCE(SUM(CASE WHEN p.at >= $3 AND p.sender = $5 THEN 1 END), 0),
	COALESCE(MAX(CASE WHEN p.at >= $3 THEN p.input_tokens + p.output_tokens END), 0),
	COALESCE(MAX(CASE WHEN p.at >= $3 THEN p.cost_usd END), 0),
	COALESCE(SUM(CASE WHEN p.at >= $4 AND p.sender = $5 AND p.sender <> '' THEN 1 END), 0),
	COALESCE(SUM(CASE WHEN p.at >= $4 AND p.sender = '' AND p.purpose = $6 THEN 1 END), 0)
	FROM checkpoints c LEFT JOIN provider_calls p ON p.at >= $7
	WHERE c.name = $1 GROUP BY c.position`

// Ledger sums the calls since the month's start (or the window's, if
// earlier); a read model not created yet is a ledger through 0.
func (q *Queries) Ledger(ctx context.Context, ask LedgerAsk) (Ledger, error) {
	from := min(ask.Month.UnixMicro(), ask.Window.UnixMicro())
	var l Ledger
	err := q.db.QueryRowContext(ctx, ledgerSQL, readmodel.CheckpointName(ReadModel{}), ask.Day.UnixMicro(), ask.Month.UnixMicro(),
		ask.Window.UnixMicro(), ask.Sender, ask.Loop, from).Scan(&l.Through,
		&l.AllDay.Tokens, &l.AllDay.USD, &l.AllDay.Calls, &l.AllMonth.Tokens, &l.AllMonth.USD, &l.AllMonth.Calls,
		&l.SenderDay.Tokens, &l.SenderDay.USD, &l.SenderDay.Calls, &l.SenderMonth.Tokens, &l.SenderMonth.USD, &l.SenderMonth.Calls,
		&l.Largest.Tokens, &l.Largest.USD, &l.SenderWindow, &l.LoopWindow)
	if errors.Is(err, sql.ErrNoRows) {
		return Ledger{}, nil
	}
	if err != nil {
		return Ledger{}, fmt.Errorf("read the spend ledger: %w", err)
	}
	return l, nil
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
