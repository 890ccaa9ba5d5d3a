-- +goose Up
-- The global log. transaction_id lets readers deliver in commit order
-- without a global append lock: see eventstore/postgres. It must be
-- assigned by the events INSERT itself (the transaction's first write).
CREATE TABLE events (
    position       bigserial   PRIMARY KEY,
    transaction_id xid8        NOT NULL DEFAULT pg_current_xact_id(),
    stream_id      text        NOT NULL,
    version        bigint      NOT NULL,
    event_id       uuid        NOT NULL,
    type           text        NOT NULL,
    data           json        NOT NULL,
    metadata       json        NOT NULL,
    recorded_at    timestamptz NOT NULL DEFAULT now(),
    -- Named so the store can tell a version conflict from a duplicate id.
    CONSTRAINT events_stream_version_key UNIQUE (stream_id, version),
    CONSTRAINT events_event_id_key UNIQUE (event_id)
);
CREATE INDEX events_delivery ON events (transaction_id, position);

-- Positions processed by named consumers and projections.
CREATE TABLE checkpoints (
    name       text        PRIMARY KEY,
    position   bigint      NOT NULL,
    updated_at timestamptz NOT NULL DEFAULT now()
);

-- +goose Down
DROP TABLE checkpoints;
DROP TABLE events;
