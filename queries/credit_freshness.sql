-- Freshness of each customer's copy of the credit ledger: billsync reads credit
-- history per customer on a budget, so some copies are older than others.
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
ledger AS (
    SELECT l.account, l.customer_id, count(*) AS entries, max(l.created_at) AS last_movement_at,
           count(DISTINCT l.product_id) AS products
    FROM credit_ledger l, params p
    WHERE (p.account_filter IS NULL OR l.account = p.account_filter)
    GROUP BY l.account, l.customer_id
),
reported AS (
    SELECT j.account, j.customer_id, max(j.reported_at) AS last_reported_at
    FROM credit_balance_reports j, params p
    WHERE (p.account_filter IS NULL OR j.account = p.account_filter)
    GROUP BY j.account, j.customer_id
),
customers_seen AS (
    SELECT account, customer_id FROM ledger
    UNION SELECT f.account, f.customer_id FROM credit_fetch_state f, params p WHERE p.account_filter IS NULL OR f.account = p.account_filter
    UNION SELECT account, customer_id FROM reported
)
SELECT s.account, c.name AS customer_name, c.email AS customer_email, s.customer_id,
       f.last_fetched_at AS ledger_fetched_at,
       round(seconds_between(f.last_fetched_at, p.ref_at) / 86400, 1) AS fetched_days_ago,
       coalesce(l.entries, 0) AS entries, coalesce(l.products, 0) AS products, l.last_movement_at,
       r.last_reported_at,
       CASE WHEN f.last_fetched_at IS NULL THEN 'NEVER FETCHED'
            WHEN r.last_reported_at > f.last_fetched_at THEN 'OLDER THAN LAST REPORT'
            ELSE 'OK' END AS freshness
FROM customers_seen s
CROSS JOIN params p
LEFT JOIN ledger l USING (account, customer_id)
LEFT JOIN reported r USING (account, customer_id)
LEFT JOIN credit_fetch_state f ON f.account = s.account AND f.customer_id = s.customer_id
LEFT JOIN customers c ON c.account = s.account AND c.id = s.customer_id
ORDER BY s.account, fetched_days_ago DESC NULLS FIRST, c.name, s.customer_id;
