-- Records the sync stored but flagged for the data-quality report (dq_flags.sql), one row per
-- record, field and kind of flag:
--   api_key_redacted   the record's text held billsync's API key, or a run of 8 or more of its
--                     characters (a service echoing it into a name): stored with the run
--                     replaced by "[redacted]", in the typed columns and the raw JSON alike;
--   service_clock     the record is dated after this machine's clock, by a service whose clock
--                     (its Date header) ran ahead of this machine's: stored as the service dates
--                     it, which may be that much off.
-- observed_at is the run's time on this machine's clock; detail says what was found, in words.
CREATE TABLE data_quality_flags (
    account     VARCHAR NOT NULL,
    run_id      BIGINT NOT NULL,
    observed_at TIMESTAMPTZ NOT NULL,
    entity      VARCHAR NOT NULL,
    record_id   VARCHAR,
    flag        VARCHAR NOT NULL,
    field       VARCHAR,
    detail      VARCHAR NOT NULL,
    path        VARCHAR,
    page        INTEGER,
    item        INTEGER
);
