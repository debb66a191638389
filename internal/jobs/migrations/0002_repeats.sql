-- Duplicates across plans: a row that repeats a change billsync already sent is held unless the person
-- marked it (repeat = yes) or the whole file (-again); rows left out of a plan and per-run held counts.
-- Only columns are added, so this applies before or after any other migration of the journal.

ALTER TABLE job_plans ADD COLUMN again BOOLEAN DEFAULT false;          -- planned with -again: every row may repeat
ALTER TABLE job_plans ADD COLUMN skipped_lines JSON;                   -- input lines left out (blank toEmail)
ALTER TABLE job_plan_actions ADD COLUMN allow_repeat BOOLEAN DEFAULT false; -- repeat = yes, or the plan's -again
ALTER TABLE job_runs ADD COLUMN held INTEGER;                          -- rows this run held as repeats
