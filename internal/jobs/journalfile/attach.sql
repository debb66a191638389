-- How a reader sees the job journal (journalfile.go). The empty stand-ins have the journal's own
-- columns (internal/jobs/migrations), which TestEmptyViewsMatchTheJournal checks.

-- name: attach
ATTACH IF NOT EXISTS '__PATH__' AS journal (READ_ONLY);

-- name: has_tables
SELECT count(*) = 1 FROM duckdb_tables()
WHERE database_name = 'journal' AND table_name IN ('credit_balance_reports');

-- name: views
CREATE OR REPLACE TEMP VIEW credit_balance_reports AS SELECT * FROM journal.credit_balance_reports;

-- name: has_plans
SELECT count(*) = 1 FROM duckdb_tables() WHERE database_name = 'journal' AND table_name = 'job_plan_actions';

-- name: names_view
-- The names a job's plan saw in the warehouse for each action (a top-up's customer and product):
-- a report names a balance only a job reported by them where its warehouse copy lacks them.
CREATE OR REPLACE TEMP VIEW credit_report_names AS
SELECT action_id, any_value(current_values->>'customerName') AS customer_name,
       any_value(current_values->>'customerEmail') AS customer_email,
       any_value(current_values->>'productName') AS product_name
FROM journal.job_plan_actions
GROUP BY action_id;

-- name: empty_names
CREATE OR REPLACE TEMP TABLE credit_report_names (
    action_id VARCHAR, customer_name VARCHAR, customer_email VARCHAR, product_name VARCHAR);

-- name: empty_views
CREATE OR REPLACE TEMP TABLE credit_balance_reports (
    account VARCHAR, customer_id VARCHAR, product_id VARCHAR, balance DECIMAL(20,4),
    reported_at TIMESTAMPTZ, job_run_id BIGINT, action_id VARCHAR);
