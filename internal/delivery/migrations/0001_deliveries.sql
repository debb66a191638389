-- The delivery journal: one row per attempt to deliver an occurrence (a delivery's name and
-- as-of date), and the files it carried. No key constraints: DuckDB rewrites an updated row
-- of an indexed table, and a row here is updated as its send progresses.
CREATE SEQUENCE delivery_id START 1;

CREATE TABLE deliveries (
    id BIGINT NOT NULL DEFAULT nextval('delivery_id'),
    name VARCHAR NOT NULL,
    as_of DATE NOT NULL,
    kind VARCHAR NOT NULL,          -- scheduled, manual, again (-again), resend (after a crash)
    scheduled_at TIMESTAMPTZ,       -- the schedule's time of a scheduled occurrence
    late BOOLEAN NOT NULL,
    stale VARCHAR,                  -- why the figures may not reflect the as-of date; NULL = fresh
    recipients VARCHAR NOT NULL,
    subject VARCHAR NOT NULL,
    message_id VARCHAR NOT NULL,
    transport VARCHAR NOT NULL,     -- smtp://host:port, smtps://host:port or outbox
    eml VARCHAR,                    -- the message as written
    sync_run BIGINT,                -- the newest sync run the reports reflect
    sync_finished_at TIMESTAMPTZ,
    state VARCHAR NOT NULL,         -- sending, sent, failed, unknown (a crash while sending)
    attempts INTEGER NOT NULL,
    error VARCHAR,
    started_at TIMESTAMPTZ NOT NULL,
    finished_at TIMESTAMPTZ
);

CREATE TABLE delivery_files (
    delivery_id BIGINT NOT NULL,
    path VARCHAR NOT NULL,
    bytes BIGINT NOT NULL,
    sha256 VARCHAR NOT NULL,
    attached BOOLEAN NOT NULL
);
