-- A service that misbehaves must not be stored as if it were right.
--
-- bs_shown: a value as a message shows it: a number as it is, anything else quoted.
CREATE OR REPLACE MACRO bs_shown(s) AS
    CASE WHEN regexp_full_match(trim(s), '-?\d+(\.\d*)?') THEN trim(s) ELSE to_json(s)::VARCHAR END;

-- bs_when: a validation message when a time parsed (v, from text s) is implausible: before
-- 2000-01-01 (epoch seconds or 0 read as milliseconds land in 1970), or later than `latest`,
-- the server's clock plus a day (epoch microseconds land in the year 57971; a record dated
-- 2999 would freeze a cursor). latest NULL checks only the lower bound (expiry times may lie
-- in the future).
CREATE OR REPLACE MACRO bs_when(field, s, v, latest) AS
    CASE
        WHEN v IS NULL THEN NULL
        WHEN v < TIMESTAMPTZ '2000-01-01 00:00:00+00' THEN
            field || ' ' || bs_shown(s) ||
            CASE WHEN regexp_full_match(trim(s), '\d{9,10}') THEN ' looks like epoch seconds, not milliseconds'
                 ELSE ' is before 2000-01-01' END
        WHEN v > latest THEN
            field || ' ' || bs_shown(s) ||
            CASE WHEN regexp_full_match(trim(s), '\d{15,17}') THEN ' looks like epoch microseconds, not milliseconds'
                 ELSE ' is more than a day after the server''s clock (' ||
                      strftime(timezone('UTC', latest - INTERVAL 1 DAY), '%Y-%m-%d %H:%M UTC') || ')' END
    END;

-- data_quality_conflicts: one id read with two different contents in one run, and again when the
-- list was paged once more. The last version read is what the entity's table keeps; both are here
-- with where they came from (path, page, item).
CREATE TABLE data_quality_conflicts (
    account VARCHAR, entity VARCHAR, stream VARCHAR, id VARCHAR,
    run_id BIGINT, observed_at TIMESTAMPTZ, path VARCHAR,
    first_page INTEGER, first_item INTEGER, first_raw JSON,
    second_page INTEGER, second_item INTEGER, second_raw JSON
);

