-- The input lines a plan left out (email-fix rows with a blank toEmail), counted as skipped. A migration of
-- its own: 0002 alters job_plans already, and DuckDB cannot commit a transaction that altered a table
-- holding rows twice.
ALTER TABLE job_plans ADD COLUMN skipped_lines JSON;
