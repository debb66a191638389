-- The sync runs that started before the end of the as-of date, newest first.
--
-- Parameters (SET VARIABLE name = value; before running this file to change one):
--   as_of    DATE     report date (end of this day in tz)      default current_date
--   tz       VARCHAR  time zone of the day boundary            default report_zone()
--   account  VARCHAR  only this billsync account; NULL = all   default NULL
--   runs     INTEGER  how many runs per account                default 50
SET VARIABLE as_of = coalesce(getvariable('as_of'), current_date);
SET VARIABLE tz = coalesce(getvariable('tz'), report_zone());
SET VARIABLE runs = coalesce(getvariable('runs'), 50);

WITH params AS (
    SELECT end_of_day(getvariable('as_of'), getvariable('tz')) AS cutoff,
           getvariable('account')::VARCHAR AS account
)
SELECT r.account, r.id AS run_id, r.status, r.started_at, r.finished_at,
       round(seconds_between(r.started_at, r.finished_at), 1) AS duration_seconds,
       r.records, r.requests, r.retries, r.error
FROM sync_runs r, params p
WHERE r.started_at < p.cutoff AND (p.account IS NULL OR r.account = p.account)
QUALIFY row_number() OVER (PARTITION BY r.account ORDER BY r.started_at DESC, r.id DESC) <= getvariable('runs')::INTEGER
ORDER BY r.account, r.started_at DESC, r.id DESC;
