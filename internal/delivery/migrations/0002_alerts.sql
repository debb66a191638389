-- The operators' alerts. alert_states holds each problem's state as last recorded (one row per
-- key): a restart, a second daemon or a crash compares what it sees with it, so a problem that
-- persists is told once. alerts holds each message: written pending when a change is recorded,
-- in the same transaction, then sending, then sent; a crash leaves it for the next run to send.
-- No key constraints, as in 0001: rows here are updated.
CREATE TABLE alert_states (
    key VARCHAR NOT NULL,           -- sync_failed, sync_partial, no_sync, dq_exceptions, unresolved_jobs, delivery_failed:NAME
    active BOOLEAN NOT NULL,        -- the problem is present
    what VARCHAR NOT NULL,
    detail VARCHAR,
    changed_at TIMESTAMPTZ NOT NULL
);

CREATE SEQUENCE alert_id START 1;

CREATE TABLE alerts (
    id BIGINT NOT NULL DEFAULT nextval('alert_id'),
    key VARCHAR NOT NULL,           -- the state's key, or an event's (its message is sent once)
    kind VARCHAR NOT NULL,          -- problem, resolved, event
    subject VARCHAR NOT NULL,
    body VARCHAR NOT NULL,
    recipients VARCHAR NOT NULL,
    observed_at TIMESTAMPTZ NOT NULL,
    state VARCHAR NOT NULL,         -- pending, sending, sent
    attempts INTEGER NOT NULL,
    error VARCHAR,
    sent_at TIMESTAMPTZ
);
