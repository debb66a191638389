-- Duplicates across plans: a row that repeats a change billsync already sent is held unless the person
-- marked it (repeat = yes) or the whole file (-again); rows left out of a plan and per-run held counts.
-- Only columns are added, so this applies before or after any other migration of the journal; each table
-- is altered once, as DuckDB cannot commit a transaction that altered a table holding rows twice
-- (job_plans.skipped_lines is 0005).

ALTER TABLE job_plans ADD COLUMN again BOOLEAN DEFAULT false;          -- planned with -again: every row may repeat
ALTER TABLE job_plan_actions ADD COLUMN allow_repeat BOOLEAN DEFAULT false; -- repeat = yes, or the plan's -again
ALTER TABLE job_runs ADD COLUMN held INTEGER;                          -- rows this run held as repeats
