package recall

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/omega-gateway/omega/projections/readmodel"
)

// Index searches the passages.
type Index struct {
	db      *sql.DB
	dialect readmodel.Dialect
}

// NewIndex returns the search of the recall read model on db (on SQLite
// a pool of readers).
func NewIndex(db *sql.DB, d readmodel.Dialect) (*Index, error) {
	if db == nil {
		return nil, errors.New("recall: the index needs a database")
	}
	if d != readmodel.Postgres && d != readmodel.SQLite {
		return nil, fmt.Errorf("recall: unknown dialect %q", d)
	}
	return &Index{db: db, dialect: d}, nil
}

// Query is one search.
type Query struct {
	Text string
	// Chat limits the search to one chat's passages (the conversation
	// key: the person's own in a private chat); "" searches everyone's,
	// which only the operator's tools do.
	Chat string
	// Except leaves out one conversation (the one a turn is in).
	Except string
	Limit  int // at most this many hits (default 10)
}

// Hit is one passage found, best first.
type Hit struct {
	Chat, ConversationID, TurnID, Project, Kind string
	At                                          time.Time
	Text                                        string
	Score                                       float64 // higher is better
}

// DefaultLimit is a search's number of hits unless asked otherwise.
const DefaultLimit = 10

// Search returns the passages that best match q's words. A text without
// a searchable word finds nothing.
func (x *Index) Search(ctx context.Context, q Query) ([]Hit, error) {
	terms := Terms(q.Text)
	if len(terms) == 0 {
		return nil, nil
	}
	limit := q.Limit
	if limit <= 0 {
		limit = DefaultLimit
	}
	stmt, args := x.statement(terms, q, limit)
	rows, err := x.db.QueryContext(ctx, stmt, args...)
	if err != nil {
		return nil, fmt.Errorf("recall: search %q: %w", q.Text, err)
	}
	defer rows.Close()
	var out []Hit
	for rows.Next() {
		var h Hit
		var at int64
		if err := rows.Scan(&h.Chat, &h.ConversationID, &h.TurnID, &h.Project, &h.Kind, &at, &h.Text, &h.Score); err != nil {
			return nil, fmt.Errorf("recall: read a hit: %w", err)
		}
		h.At = time.UnixMicro(at).UTC()
		out = append(out, h)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("recall: search %q: %w", q.Text, err)
	}
	return out, nil
}

// statement is the search's SQL and its arguments: of one chat's
// passages (its owned terms) or of everyone's (the stems).
func (x *Index) statement(terms []string, q Query, limit int) (string, []any) {
	ofChat := q.Chat != ""
	if x.dialect == readmodel.Postgres {
		col, chat := "tsv", "$2 = ''"
		if ofChat {
			col, chat = "owned", "chat = $2"
		}
		return fmt.Sprintf(`SELECT p.chat, p.conversation_id, p.turn_id, p.project, p.kind, p.at, p.body, f.score
			FROM (SELECT key, ts_rank(%[1]s, q, 1) AS score FROM recall_fts, to_tsquery('simple', $1) q
				WHERE %[1]s @@ q AND %[2]s AND conversation_id <> $3
				ORDER BY score DESC, key LIMIT $4) f
			JOIN recall_passages p ON p.key = f.key
			ORDER BY f.score DESC, p.at DESC, p.key`, col, chat), []any{tsQuery(terms, q.Chat), q.Chat, q.Except, limit}
	}
	// The index ranks and leaves the conversation out by itself (see
	// ftsMatch); only the best rows are read from the passages.
	weights, chat := "1.0, 0.0, 0.0", "$2 = ''"
	if ofChat {
		weights, chat = "0.0, 1.0, 0.0", "p.chat = $2"
	}
	return fmt.Sprintf(`SELECT p.chat, p.conversation_id, p.turn_id, p.project, p.kind, p.at, p.body, f.score
		FROM (SELECT rowid, -bm25(recall_fts, %s) AS score FROM recall_fts WHERE recall_fts MATCH $1
			ORDER BY score DESC, rowid LIMIT $3) f
		JOIN recall_passages p ON p.id = f.rowid
		WHERE %s
		ORDER BY f.score DESC, p.at DESC, p.id`, weights, chat), []any{ftsMatch(terms, q.Chat, q.Except), q.Chat, limit}
}

// Conversations are the conversations of hits in the order of their best
// passage, at most n.
func Conversations(hits []Hit, n int) []string {
	seen := map[string]bool{}
	var out []string
	for _, h := range hits {
		if seen[h.ConversationID] {
			continue
		}
		seen[h.ConversationID] = true
		out = append(out, h.ConversationID)
		if len(out) == n {
			break
		}
	}
	return out
}
