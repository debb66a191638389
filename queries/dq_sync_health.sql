-- Sync health per account and table: when billsync last read the table
-- completely (before the end of the as-of date), how many records that read
-- returned, how stale it is, and how many rows the warehouse holds.
--
-- Parameters (SET VARIABLE name = value; before running this file to change one):
--   as_of    DATE     report date (end of this day in tz; never later than now)  default current_date
--   tz       VARCHAR  time zone of the day boundary                              default report_zone()
--   account  VARCHAR  only this billsync account; NULL = all                     default NULL
SET VARIABLE as_of = coalesce(getvariable('as_of'), current_date);
SET VARIABLE tz = coalesce(getvariable('tz'), report_zone());

WITH params AS (
    SELECT end_of_day(getvariable('as_of'), getvariable('tz')) AS cutoff,
           least(now(), end_of_day(getvariable('as_of'), getvariable('tz'))) AS ref_at,
           getvariable('account')::VARCHAR AS account_filter
),
done AS (
    SELECT r.account, s.entity, s.run_id, max(s.finished_at) AS finished_at, sum(s.records) AS records
    FROM sync_streams s JOIN sync_runs r ON r.id = s.run_id, params p
    WHERE s.complete AND s.finished_at < p.cutoff AND (p.account_filter IS NULL OR r.account = p.account_filter)
    GROUP BY r.account, s.entity, s.run_id
),
latest AS (
    SELECT account, entity, max(finished_at) AS last_complete_at, arg_max(records, finished_at) AS records,
           arg_max(run_id, finished_at) AS run_id
    FROM done GROUP BY account, entity
),
failing AS (
    SELECT r.account, s.entity, arg_max(s.error, s.started_at) AS last_error, max(s.started_at) AS last_error_at
    FROM sync_streams s JOIN sync_runs r ON r.id = s.run_id, params p
    WHERE s.error IS NOT NULL AND s.started_at < p.cutoff AND (p.account_filter IS NULL OR r.account = p.account_filter)
    GROUP BY r.account, s.entity
),
-- entity_rows: one branch per declared list's table, generated from internal/entity
held AS (
    SELECT account, entity, rows, deleted_rows FROM entity_rows
),
keys AS (
    SELECT account, entity FROM latest UNION SELECT account, entity FROM failing
    UNION SELECT h.account, h.entity FROM held h, params p WHERE p.account_filter IS NULL OR h.account = p.account_filter
)
SELECT k.account, k.entity, l.last_complete_at, l.run_id AS last_complete_run, l.records AS records_read,
       round(seconds_between(l.last_complete_at, p.ref_at) / 3600, 1) AS staleness_hours,
       -- A details stream (product_details) completes the rows of its table and holds none of its own.
       CASE WHEN k.entity NOT LIKE '%\_details' ESCAPE '\' THEN coalesce(h.rows, 0) END AS rows,
       CASE WHEN k.entity NOT LIKE '%\_details' ESCAPE '\' THEN coalesce(h.deleted_rows, 0) END AS deleted_rows,
       f.last_error_at, f.last_error
FROM keys k
CROSS JOIN params p
LEFT JOIN latest l USING (account, entity)
LEFT JOIN failing f USING (account, entity)
LEFT JOIN held h USING (account, entity)
ORDER BY k.account, staleness_hours DESC NULLS FIRST, k.entity;
