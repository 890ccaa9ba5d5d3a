-- +goose Up
-- read_after_horizon is ReadAll's read (eventstore/postgres) for a reader
-- that waits for one of its own commits to become readable: it waits in
-- the server, up to wait_ms, until every transaction older than the one
-- that wrote the event at awaited has ended, then reads. Polling from the
-- client instead cost a round trip and a transaction every few
-- milliseconds while another process's commit held the horizon back. Each
-- check of the loop takes a fresh snapshot (a volatile function's
-- expressions do); the checks back off from 1 ms to 4 ms, as each costs
-- the server a little CPU and the horizon is mostly held for several ms.
-- +goose StatementBegin
CREATE FUNCTION read_after_horizon(after_pos bigint, lim int, awaited bigint, wait_ms int)
RETURNS SETOF events
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
    xid      xid8;
    nap      float8 := 0.001;
    deadline timestamptz := clock_timestamp() + wait_ms * interval '1 millisecond';
BEGIN
    SELECT e.transaction_id INTO xid FROM events e WHERE e.position = awaited;
    WHILE xid IS NOT NULL AND pg_snapshot_xmin(pg_current_snapshot()) <= xid
          AND clock_timestamp() < deadline LOOP
        PERFORM pg_sleep(nap);
        nap := least(nap * 2, 0.004);
    END LOOP;
    IF after_pos <= 0 THEN
        RETURN QUERY SELECT e.* FROM events e
        WHERE e.transaction_id < pg_snapshot_xmin(pg_current_snapshot())
        ORDER BY e.transaction_id, e.position
        LIMIT lim;
        RETURN;
    END IF;
    RETURN QUERY SELECT e.* FROM events e
    WHERE (e.transaction_id, e.position) > (SELECT a.transaction_id, a.position FROM events a WHERE a.position = after_pos)
      AND e.transaction_id < pg_snapshot_xmin(pg_current_snapshot())
    ORDER BY e.transaction_id, e.position
    LIMIT lim;
END $$;
-- +goose StatementEnd

-- +goose Down
DROP FUNCTION read_after_horizon(bigint, int, bigint, int);
