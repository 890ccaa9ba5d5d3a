package matrix

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// tokens keeps each account's /sync position (next_batch) in omega's own
// database, advanced only after every message of the batch was recorded,
// so a restart resumes where the last recorded batch ended: nothing is
// replayed (a message seen twice is still deduplicated on its event id)
// and nothing is skipped.
type tokens interface {
	load(ctx context.Context, userID string) (string, error)
	save(ctx context.Context, userID, next string) error
}

// sqlTokens is the table matrix_sync_tokens, owned by this channel, on
// SQLite or PostgreSQL.
type sqlTokens struct {
	db      *sql.DB
	dialect string
}

const createTokens = `CREATE TABLE IF NOT EXISTS matrix_sync_tokens (
	user_id TEXT PRIMARY KEY,
	next_batch TEXT NOT NULL
)`

// openTokens creates the table when it is missing.
func openTokens(ctx context.Context, db *sql.DB, dialect string) (*sqlTokens, error) {
	if dialect != "sqlite" && dialect != "postgres" {
		return nil, fmt.Errorf("matrix sync tokens: unsupported dialect %q", dialect)
	}
	if _, err := db.ExecContext(ctx, createTokens); err != nil {
		return nil, fmt.Errorf("matrix sync tokens: create table: %w", err)
	}
	return &sqlTokens{db: db, dialect: dialect}, nil
}

func (s *sqlTokens) q(query string) string {
	if s.dialect == "sqlite" {
		return query
	}
	// PostgreSQL numbers its parameters.
	out := make([]byte, 0, len(query)+4)
	n := 0
	for i := 0; i < len(query); i++ {
		if query[i] == '?' {
			n++
			out = append(out, fmt.Sprintf("$%d", n)...)
			continue
		}
		out = append(out, query[i])
	}
	return string(out)
}

func (s *sqlTokens) load(ctx context.Context, userID string) (string, error) {
	var next string
	err := s.db.QueryRowContext(ctx, s.q(`SELECT next_batch FROM matrix_sync_tokens WHERE user_id = ?`), userID).Scan(&next)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("matrix sync tokens: load: %w", err)
	}
	return next, nil
}

func (s *sqlTokens) save(ctx context.Context, userID, next string) error {
	_, err := s.db.ExecContext(ctx, s.q(`INSERT INTO matrix_sync_tokens (user_id, next_batch) VALUES (?, ?)
		ON CONFLICT (user_id) DO UPDATE SET next_batch = excluded.next_batch`), userID, next)
	if err != nil {
		return fmt.Errorf("matrix sync tokens: save: %w", err)
	}
	return nil
}

// memTokens keeps the position in memory, where omega has no database
// (a channel built for a one-off check).
type memTokens struct{ next map[string]string }

func (m *memTokens) load(_ context.Context, userID string) (string, error) {
	return m.next[userID], nil
}

func (m *memTokens) save(_ context.Context, userID, next string) error {
	m.next[userID] = next
	return nil
}
