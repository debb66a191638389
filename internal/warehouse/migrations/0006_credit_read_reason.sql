-- Why each customer's credit history was last read (queries/credit_targets.sql: never, topup,
-- signal, bound, interval, ahead): an operator can see what a night's reads were spent on, and
-- how often each reason found an entry (credit_ledger.first_seen_run = run_id). Reads recorded
-- before this migration have none.
ALTER TABLE credit_fetch_state ADD COLUMN reason VARCHAR;
