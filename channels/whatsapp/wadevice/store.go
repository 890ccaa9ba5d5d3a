// Package wadevice is omega's side of whatsmeow: the linked device's
// store in omega's own database, and the client adapter the channel
// drives.
package wadevice

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"

	"github.com/lib/pq"
	"go.mau.fi/whatsmeow/store/sqlstore"
	waLog "go.mau.fi/whatsmeow/util/log"
)

// OpenDeviceStore creates (or upgrades) whatsmeow's tables in omega's own
// database and returns the container holding the linked device.
//
// dialect is "postgres" (a lib/pq handle) or "sqlite" (a modernc.org/sqlite
// handle). For SQLite pass the writable pool: whatsmeow writes keys and
// sessions constantly, and its schema relies on foreign keys, which must be
// enabled on every pooled connection (DSN parameter _foreign_keys=1, as the
// eventstore's SQLite pool does).
func OpenDeviceStore(ctx context.Context, db *sql.DB, dialect string, logger *slog.Logger) (*sqlstore.Container, error) {
	var waDialect string
	switch dialect {
	case "postgres":
		waDialect = "postgres"
		// whatsmeow binds Postgres arrays (bulk session and LID lookups)
		// through this package-level hook and falls back to slower
		// per-row queries without it. It is only ever set to pq.Array, so
		// assigning it again on every call is harmless.
		sqlstore.PostgresArrayWrapper = pq.Array
	case "sqlite":
		// whatsmeow's dbutil only knows the mattn driver name; the dialect
		// selects SQL flavour, not the driver, so modernc's handle works.
		waDialect = "sqlite3"
	default:
		return nil, fmt.Errorf("whatsapp device store: unsupported dialect %q", dialect)
	}
	container := sqlstore.NewWithDB(db, waDialect, newWALogger(logger, "store"))
	if err := container.Upgrade(ctx); err != nil {
		return nil, fmt.Errorf("whatsapp device store: upgrade %s schema: %w", dialect, err)
	}
	return container, nil
}

// waLogger adapts slog to whatsmeow's printf-style logger.
type waLogger struct{ l *slog.Logger }

func newWALogger(l *slog.Logger, module string) waLog.Logger {
	if l == nil {
		l = slog.New(slog.DiscardHandler)
	}
	return waLogger{l.With("module", "whatsmeow/"+module)}
}

func (w waLogger) Warnf(msg string, args ...any)  { w.l.Warn(fmt.Sprintf(msg, args...)) }
func (w waLogger) Errorf(msg string, args ...any) { w.l.Error(fmt.Sprintf(msg, args...)) }
func (w waLogger) Infof(msg string, args ...any)  { w.l.Info(fmt.Sprintf(msg, args...)) }

func (w waLogger) Debugf(msg string, args ...any) {
	// Formatting whatsmeow's very chatty debug output is costly; skip it
	// unless debug is actually enabled.
	if w.l.Enabled(context.Background(), slog.LevelDebug) {
		w.l.Debug(fmt.Sprintf(msg, args...))
	}
}

func (w waLogger) Sub(module string) waLog.Logger {
	return waLogger{w.l.With("sub", module)}
}
