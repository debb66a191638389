-- Credit balances for a period, per customer, product and wallet type: opening
-- balance, credits by type, debits by type and closing balance, compared with the
-- last balance the service reported in an add-credit response.
--
-- Reads credit_balance_reports, the write-job journal's table (billsync provides
-- it, empty when there is no journal). By hand, before running this file:
--   ATTACH 'data/billsync-jobs.duckdb' AS journal (READ_ONLY);
--   CREATE TEMP VIEW credit_balance_reports AS SELECT * FROM journal.credit_balance_reports;
-- Parameters (SET VARIABLE name = value; before running this file to change one):
--   as_of         DATE     period end, inclusive (end of this day in tz)   default current_date
--   period_start  DATE     period start, inclusive                         default first day of as_of's month
--   tz            VARCHAR  time zone of the day boundaries                 default 'Asia/Jakarta'
--   account       VARCHAR  only this billsync account; NULL = all          default NULL
--
-- A reported balance is compared with the ledger's balance at the moment it was
-- reported, not with the closing balance. The service stamps the report in whole
-- seconds (its Date header) while ledger entries carry milliseconds, so the entry
-- the report answered for is created within that second, after reported_at: the
-- ledger at report counts every entry created before the end of the reported second.
SET VARIABLE as_of = coalesce(getvariable('as_of'), current_date);
SET VARIABLE period_start = coalesce(getvariable('period_start'), date_trunc('month', getvariable('as_of')::DATE)::DATE);
SET VARIABLE tz = coalesce(getvariable('tz'), 'Asia/Jakarta');

-- BEGIN credit_balances (repeated in credit_by_product.sql)
WITH params AS (
    SELECT timezone(getvariable('tz'), getvariable('period_start')::DATE::TIMESTAMP) AS start_at,
           timezone(getvariable('tz'), (getvariable('as_of')::DATE + 1)::TIMESTAMP) AS cutoff,
           getvariable('account')::VARCHAR AS account
),
ledger AS (
    SELECT l.*, l.created_at >= p.start_at AS in_period
    FROM credit_ledger l, params p
    WHERE (p.account IS NULL OR l.account = p.account) AND l.created_at < p.cutoff
),
moves AS (
    SELECT account, customer_id, product_id, wallet_type,
           coalesce(sum(credit - debit) FILTER (NOT in_period), 0) AS opening,
           coalesce(sum(credit) FILTER (in_period AND type = 'TOPUP'), 0) AS topup,
           coalesce(sum(credit) FILTER (in_period AND type = 'MERCHANT_TOPUP'), 0) AS merchant_topup,
           coalesce(sum(credit) FILTER (in_period AND type = 'TRIAL_TOPUP'), 0) AS trial_topup,
           coalesce(sum(credit) FILTER (in_period AND type NOT IN ('TOPUP', 'MERCHANT_TOPUP', 'TRIAL_TOPUP')), 0) AS other_credits,
           coalesce(sum(debit) FILTER (in_period AND type = 'CREDIT_USAGE'), 0) AS usage,
           coalesce(sum(debit) FILTER (in_period AND type = 'EXPIRE_VOID'), 0) AS expired_void,
           coalesce(sum(debit) FILTER (in_period AND type NOT IN ('CREDIT_USAGE', 'EXPIRE_VOID')), 0) AS other_debits,
           coalesce(sum(credit - debit), 0) AS closing,
           max(created_at) AS last_movement_at
    FROM ledger
    GROUP BY account, customer_id, product_id, wallet_type
),
reported AS (
    SELECT j.account, j.customer_id, j.product_id,
           arg_max(j.balance, j.reported_at) AS reported_balance, max(j.reported_at) AS reported_at
    FROM credit_balance_reports j, params p
    WHERE (p.account IS NULL OR j.account = p.account) AND j.reported_at < p.cutoff
    GROUP BY j.account, j.customer_id, j.product_id
),
ledger_at_report AS (
    SELECT r.account, r.customer_id, r.product_id, coalesce(sum(l.credit - l.debit), 0) AS ledger_balance
    FROM reported r
    LEFT JOIN credit_ledger l ON l.account = r.account AND l.customer_id = r.customer_id
                              AND l.product_id = r.product_id
                              AND l.created_at < date_trunc('second', r.reported_at) + INTERVAL 1 SECOND
    GROUP BY r.account, r.customer_id, r.product_id
),
keyed AS (
    SELECT coalesce(m.account, r.account) AS account, coalesce(m.customer_id, r.customer_id) AS customer_id,
           coalesce(m.product_id, r.product_id) AS product_id, m.wallet_type,
           coalesce(m.opening, 0) AS opening, coalesce(m.topup, 0) AS topup,
           coalesce(m.merchant_topup, 0) AS merchant_topup, coalesce(m.trial_topup, 0) AS trial_topup,
           coalesce(m.other_credits, 0) AS other_credits, coalesce(m.usage, 0) AS usage,
           coalesce(m.expired_void, 0) AS expired_void, coalesce(m.other_debits, 0) AS other_debits,
           coalesce(m.closing, 0) AS closing, m.last_movement_at,
           r.reported_balance, r.reported_at
    FROM moves m
    FULL JOIN reported r ON r.account = m.account AND r.customer_id = m.customer_id AND r.product_id = m.product_id
)
SELECT k.account, c.name AS customer_name, c.email AS customer_email, k.customer_id,
       pr.name AS product_name, k.product_id, k.wallet_type,
       k.opening, k.topup, k.merchant_topup, k.trial_topup, k.other_credits,
       k.usage, k.expired_void, k.other_debits, k.closing,
       k.reported_balance, k.reported_at, la.ledger_balance AS ledger_at_report,
       la.ledger_balance - k.reported_balance AS difference,
       f.last_fetched_at AS ledger_fetched_at,
       CASE WHEN k.reported_at IS NULL THEN NULL
            WHEN f.last_fetched_at IS NULL OR f.last_fetched_at < k.reported_at THEN 'LEDGER OLDER THAN REPORT'
            WHEN la.ledger_balance = k.reported_balance THEN 'OK'
            ELSE 'MISMATCH' END AS reconciliation,
       k.last_movement_at
FROM keyed k
LEFT JOIN customers c ON c.account = k.account AND c.id = k.customer_id
LEFT JOIN products pr ON pr.account = k.account AND pr.id = k.product_id
LEFT JOIN ledger_at_report la ON la.account = k.account AND la.customer_id = k.customer_id AND la.product_id = k.product_id
LEFT JOIN credit_fetch_state f ON f.account = k.account AND f.customer_id = k.customer_id
-- END credit_balances
ORDER BY k.account, c.name NULLS LAST, k.customer_id, pr.name, k.product_id, k.wallet_type;
