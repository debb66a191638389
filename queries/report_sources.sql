-- The sync runs a report is based on: per account, the newest run in the
-- warehouse file and the newest one that succeeded. billsync prints this on
-- every report's summary sheet.
--
-- Parameters (SET VARIABLE name = value; before running this file to change one):
--   account  VARCHAR  only this billsync account; NULL = all   default NULL
WITH params AS (SELECT getvariable('account')::VARCHAR AS account)
SELECT r.account,
       max(r.id) AS last_run,
       arg_max(r.status, r.id) AS last_run_status,
       arg_max(r.finished_at, r.id) AS last_run_finished_at,
       max(r.id) FILTER (r.status = 'succeeded') AS last_succeeded_run,
       arg_max(r.finished_at, r.id) FILTER (r.status = 'succeeded') AS last_succeeded_at
FROM sync_runs r, params p
WHERE p.account IS NULL OR r.account = p.account
GROUP BY r.account
ORDER BY r.account;
