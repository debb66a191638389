-- How a reader sees the job journal (journalfile.go). The empty stand-ins have the journal's own
-- columns (internal/jobs/migrations), which TestEmptyViewsMatchTheJournal checks.

-- name: attach
ATTACH IF NOT EXISTS '__PATH__' AS journal (READ_ONLY);

-- name: has_tables
SELECT count(*) = 1 FROM duckdb_tables()
WHERE database_name = 'journal' AND table_name IN ('credit_balance_reports');

-- name: views
CREATE OR REPLACE TEMP VIEW credit_balance_reports AS SELECT * FROM journal.credit_balance_reports;

-- name: empty_views
CREATE OR REPLACE TEMP TABLE credit_balance_reports (
    account VARCHAR, customer_id VARCHAR, product_id VARCHAR, balance DECIMAL(20,4),
    reported_at TIMESTAMPTZ, job_run_id BIGINT, action_id VARCHAR);
