package discord

import (
	"context"
	"database/sql"
	"fmt"
)

// cursors keep, in omega's database, the newest message id the pipeline
// recorded in each Discord channel, so that an omega started again reads
// back what was sent while it was down (a new gateway session replays
// nothing). The table is the channel's own, as WhatsApp's device store
// is: nothing else reads it.
type cursors struct {
	db     *sql.DB
	upsert string
}

const cursorTable = `CREATE TABLE IF NOT EXISTS discord_cursors (
	channel_id TEXT PRIMARY KEY,
	message_id TEXT NOT NULL
)`

// openCursors creates the table if needed; a nil db keeps no cursors.
func openCursors(ctx context.Context, db *sql.DB, dialect string) (*cursors, error) {
	if db == nil {
		return nil, nil
	}
	args := "?, ?"
	switch dialect {
	case "postgres":
		args = "$1, $2"
	case "sqlite":
	default:
		return nil, fmt.Errorf("discord cursors: unsupported dialect %q", dialect)
	}
	if _, err := db.ExecContext(ctx, cursorTable); err != nil {
		return nil, fmt.Errorf("discord cursors: create table: %w", err)
	}
	// Ids are snowflakes, ordered as numbers: a cursor only moves forward.
	upsert := `INSERT INTO discord_cursors (channel_id, message_id) VALUES (` + args + `)
ON CONFLICT (channel_id) DO UPDATE SET message_id = excluded.message_id
WHERE length(excluded.message_id) > length(discord_cursors.message_id)
   OR (length(excluded.message_id) = length(discord_cursors.message_id) AND excluded.message_id > discord_cursors.message_id)`
	return &cursors{db: db, upsert: upsert}, nil
}

func (c *cursors) load(ctx context.Context) (map[string]string, error) {
	out := map[string]string{}
	if c == nil {
		return out, nil
	}
	rows, err := c.db.QueryContext(ctx, `SELECT channel_id, message_id FROM discord_cursors`)
	if err != nil {
		return nil, fmt.Errorf("discord cursors: load: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var ch, id string
		if err := rows.Scan(&ch, &id); err != nil {
			return nil, fmt.Errorf("discord cursors: load: %w", err)
		}
		out[ch] = id
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("discord cursors: load: %w", err)
	}
	return out, nil
}

func (c *cursors) save(ctx context.Context, channel, id string) error {
	if c == nil {
		return nil
	}
	if _, err := c.db.ExecContext(ctx, c.upsert, channel, id); err != nil {
		return fmt.Errorf("discord cursors: save %s: %w", channel, err)
	}
	return nil
}
