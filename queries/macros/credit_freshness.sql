-- credit_freshness: how fresh billsync's copy of each customer's credit ledger is. billsync reads
-- credit history per customer on a request budget, so copies differ in age. Every customer with a
-- ledger entry, a credit read or a balance the service reported (credit_balance_reports, the
-- write-job journal's table: attach it first, see docs/reports.md), with its last read and that
-- read's age in days at the end of as_of in tz (never later than now), its entries and products,
-- and its state: NEVER FETCHED, OLDER THAN LAST REPORT (the service reported a balance after
-- billsync's last read, or in the same whole second, so the copy cannot confirm it) or OK.
CREATE OR REPLACE MACRO credit_freshness(as_of, tz := report_zone(), account := NULL) AS TABLE
WITH p AS (
    SELECT least(now(), end_of_day(as_of, tz)) AS ref_at
),
ledger AS (
    SELECT l.account, l.customer_id, count(*) AS entries, max(l.created_at) AS last_movement_at,
           count(DISTINCT l.product_id) AS products
    FROM credit_ledger l
    WHERE account IS NULL OR l.account = account
    GROUP BY l.account, l.customer_id
),
reported AS (
    SELECT j.account, j.customer_id, max(j.reported_at) AS last_reported_at
    FROM credit_balance_reports j
    WHERE account IS NULL OR j.account = account
    GROUP BY j.account, j.customer_id
),
seen AS (
    SELECT g.account, g.customer_id FROM ledger g
    UNION SELECT f.account, f.customer_id FROM credit_fetch_state f WHERE account IS NULL OR f.account = account
    UNION SELECT r.account, r.customer_id FROM reported r
)
SELECT s.account, s.customer_id, f.last_fetched_at,
       seconds_between(f.last_fetched_at, p.ref_at) / 86400 AS days_old,
       coalesce(g.entries, 0) AS entries, coalesce(g.products, 0) AS products, g.last_movement_at,
       r.last_reported_at,
       CASE WHEN f.last_fetched_at IS NULL THEN 'NEVER FETCHED'
            WHEN f.last_fetched_at < date_trunc('second', r.last_reported_at) + INTERVAL 1 SECOND THEN 'OLDER THAN LAST REPORT'
            ELSE 'OK' END AS freshness
FROM seen s
CROSS JOIN p
LEFT JOIN ledger g ON g.account = s.account AND g.customer_id = s.customer_id
LEFT JOIN reported r ON r.account = s.account AND r.customer_id = s.customer_id
LEFT JOIN credit_fetch_state f ON f.account = s.account AND f.customer_id = s.customer_id;
