-- +goose Up
-- SQLite serializes writers, so commit order is position order.
CREATE TABLE events (
    position    INTEGER PRIMARY KEY AUTOINCREMENT,
    stream_id   TEXT    NOT NULL,
    version     INTEGER NOT NULL,
    event_id    TEXT    NOT NULL UNIQUE,
    type        TEXT    NOT NULL,
    data        TEXT    NOT NULL,
    metadata    TEXT    NOT NULL,
    recorded_at INTEGER NOT NULL, -- unix microseconds
    UNIQUE (stream_id, version)
);
CREATE INDEX events_type ON events (type, position);

CREATE TABLE checkpoints (
    name       TEXT    PRIMARY KEY,
    position   INTEGER NOT NULL,
    updated_at INTEGER NOT NULL
);

-- +goose Down
DROP TABLE checkpoints;
DROP TABLE events;
