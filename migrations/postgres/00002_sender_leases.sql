-- +goose Up
-- Per-sender leases: the process holding a sender's lease runs that
-- sender's turns, one at a time. Coordination state, not knowledge: every
-- fact about a turn is in the event log.
CREATE TABLE sender_leases (
    sender     text   PRIMARY KEY,
    owner      text   NOT NULL,
    expires_at bigint NOT NULL -- unix milliseconds
);

-- +goose Down
DROP TABLE sender_leases;
