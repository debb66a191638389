-- How fresh billsync's copy of the credit ledger is, in a few figures for the
-- credit summary: per freshness state of credit_freshness.sql (the same
-- customers and the same rule), how many customers, and how old their copies
-- are (oldest, median and 95th percentile, days).
--
-- Reads credit_balance_reports from the write-job journal (see credit_balances.sql).
-- Parameters (SET VARIABLE name = value; before running this file to change one):
--   as_of    DATE     report date (end of this day in tz; never later than now)  default current_date
--   tz       VARCHAR  time zone of the day boundary                              default 'Asia/Jakarta'
--   account  VARCHAR  only this billsync account; NULL = all                     default NULL
SET VARIABLE as_of = coalesce(getvariable('as_of'), current_date);
SET VARIABLE tz = coalesce(getvariable('tz'), 'Asia/Jakarta');

WITH params AS (
    SELECT least(now(), end_of_day(getvariable('as_of'), getvariable('tz'))) AS ref_at,
           getvariable('account')::VARCHAR AS account_filter
),
reported AS (
    SELECT j.account, j.customer_id, max(j.reported_at) AS last_reported_at
    FROM credit_balance_reports j, params p
    WHERE (p.account_filter IS NULL OR j.account = p.account_filter)
    GROUP BY j.account, j.customer_id
),
customers_seen AS (
    SELECT DISTINCT l.account, l.customer_id FROM credit_ledger l, params p WHERE p.account_filter IS NULL OR l.account = p.account_filter
    UNION SELECT f.account, f.customer_id FROM credit_fetch_state f, params p WHERE p.account_filter IS NULL OR f.account = p.account_filter
    UNION SELECT account, customer_id FROM reported
),
per_customer AS (
    SELECT s.account, seconds_between(f.last_fetched_at, p.ref_at) / 86400 AS days_old,
           CASE WHEN f.last_fetched_at IS NULL THEN 'NEVER FETCHED'
                WHEN r.last_reported_at > f.last_fetched_at THEN 'OLDER THAN LAST REPORT'
                ELSE 'OK' END AS freshness
    FROM customers_seen s
    CROSS JOIN params p
    LEFT JOIN reported r USING (account, customer_id)
    LEFT JOIN credit_fetch_state f ON f.account = s.account AND f.customer_id = s.customer_id
)
SELECT account, freshness, count(*) AS customers,
       round(max(days_old), 1) AS oldest_days,
       round(median(days_old), 1) AS median_days,
       round(quantile_cont(days_old, 0.95), 1) AS p95_days
FROM per_customer
GROUP BY account, freshness
ORDER BY account, CASE freshness WHEN 'NEVER FETCHED' THEN 0 WHEN 'OLDER THAN LAST REPORT' THEN 1 ELSE 2 END;
