-- +goose Up
-- Per-sender leases: see the PostgreSQL migration.
CREATE TABLE sender_leases (
    sender     TEXT    PRIMARY KEY,
    owner      TEXT    NOT NULL,
    expires_at INTEGER NOT NULL -- unix milliseconds
);

-- +goose Down
DROP TABLE sender_leases;
