// Package postgres is the PostgreSQL event store: the production backend,
// shared by every omega process that points at the same database.
//
// # Delivery order without a global lock
//
// Positions come from a bigserial, assigned when a row is inserted, but
// transactions commit in any order: a reader that simply followed
// positions would skip position 7 if it read while 7's transaction was
// still open and 8's had already committed (the "bigserial gap" problem).
// Serializing appends with a global lock fixes that but caps throughput
// (about 1.3k appends/s with 16 writers when measured), so this store uses
// the technique of watermill-sql v3 instead:
//
//   - every row records the id of the transaction that wrote it
//     (transaction_id xid8 DEFAULT pg_current_xact_id());
//   - ReadAll delivers in (transaction_id, position) order, and only rows
//     whose transaction_id is below pg_snapshot_xmin(pg_current_snapshot()),
//     the oldest transaction still running. Every transaction below that
//     horizon has finished, and new ones always get larger ids, so the
//     readable prefix of the order can only grow at its end: a reader that
//     keeps the last position it saw never misses an event.
//
// The transaction id must be assigned by the events INSERT itself, never
// earlier in the transaction: the version check reads without writing, so
// a transaction appending version n+1 of a stream only gets its id after
// the transaction that wrote version n has committed, and therefore a
// larger id. Stream versions thus appear in delivery order. Do not add a
// write before the INSERT in Append.
//
// The known trap: the horizon is database-wide. Any long-running
// transaction that holds a transaction id, in any table or schema of the
// database (a stuck migration, an idle-in-transaction session), holds back
// delivery of every event committed after it began, until it ends. Appends
// still succeed; followers just stall. Keep omega's database free of long
// write transactions, and watch pg_stat_activity for "idle in transaction"
// when followers lag.
//
// A process waiting to read its own commit (the shared Tail, for a message
// the scheduler must place in the order) waits for the horizon in the
// server: the read_after_horizon function checks it with a fresh snapshot
// every few milliseconds, up to a bound, then reads. With several
// processes the horizon is nearly always held by another's commit waiting
// for its flush, and reading from the client until it moved cost a round
// trip and a transaction per try.
//
// # Change signals
//
// Followers are woken by an in-process Broadcaster after each commit and by
// LISTEN/NOTIFY for appends made by other processes. NOTIFY is sent after
// commit, not inside the append transaction (which would take a global
// lock at commit and serialize committing writers), and is coalesced to at
// most one per process every few milliseconds, in a transaction that does
// not wait for its flush (a NOTIFY takes a transaction id, which holds the
// horizon back until the commit ends). A busy process reads the log within
// milliseconds of most of its appends (its own message, to place it in the
// order; the applier, at its pace), so the signal rides on that read and
// only a signal no read carried soon costs a transaction of its own. Signals are best-effort: Follow also polls.
package postgres
