-- A service that misbehaves must not be stored as if it were right: the times it sends are
-- checked by bs_when (../macros.sql), and what it sends twice differently is kept here.

-- data_quality_conflicts: one id read with two different contents in one run, and again when the
-- list was paged once more. The last version read is what the entity's table keeps; both are here
-- with where they came from (path, page, item).
CREATE TABLE data_quality_conflicts (
    account VARCHAR, entity VARCHAR, stream VARCHAR, id VARCHAR,
    run_id BIGINT, observed_at TIMESTAMPTZ, path VARCHAR,
    first_page INTEGER, first_item INTEGER, first_raw JSON,
    second_page INTEGER, second_item INTEGER, second_raw JSON
);

