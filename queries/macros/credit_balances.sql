-- credit_balances(as_of[, tz, account, period_start]): credit per customer, product and wallet type
-- for the period from period_start (default: the first day of as_of's month) to the end of the
-- day as_of: opening balance, credits by type, debits by type and closing balance, compared with
-- the last balance the service reported in an add-credit response (credit_balance_reports, the
-- write-job journal's table: attach it first, see docs/reports.md; a customer or product this copy
-- lacks is named as the job's plan saw it, credit_report_names).
-- A reported balance is compared with the ledger's balance at the moment it was reported, not with
-- the closing balance. The service stamps the report in whole seconds (its Date header) while
-- ledger entries carry milliseconds, so the entry the report answered for is created within that
-- second, after reported_at: the ledger at report counts every entry created before the end of
-- the reported second. For the same reason a copy read before the end of the reported second may
-- predate the entry (a daemon applies approved top-ups right after its sync): it is not compared.
CREATE OR REPLACE MACRO credit_balances(as_of, tz := report_zone(), account := NULL, period_start := NULL) AS TABLE
WITH p AS (
    SELECT timezone(tz, coalesce(period_start::DATE, date_trunc('month', as_of::DATE)::DATE)::TIMESTAMP) AS start_at,
           end_of_day(as_of, tz) AS cutoff
),
ledger AS (
    SELECT l.*, l.created_at >= p.start_at AS in_period
    FROM credit_ledger l, p
    WHERE (account IS NULL OR l.account = account) AND l.created_at < p.cutoff
),
moves AS (
    SELECT l.account, l.customer_id, l.product_id, l.wallet_type,
           coalesce(sum(l.credit - l.debit) FILTER (NOT l.in_period), 0) AS opening,
           coalesce(sum(l.credit) FILTER (l.in_period AND l.type = 'TOPUP'), 0) AS topup,
           coalesce(sum(l.credit) FILTER (l.in_period AND l.type = 'MERCHANT_TOPUP'), 0) AS merchant_topup,
           coalesce(sum(l.credit) FILTER (l.in_period AND l.type = 'TRIAL_TOPUP'), 0) AS trial_topup,
           coalesce(sum(l.credit) FILTER (l.in_period AND l.type NOT IN ('TOPUP', 'MERCHANT_TOPUP', 'TRIAL_TOPUP')), 0) AS other_credits,
           coalesce(sum(l.debit) FILTER (l.in_period AND l.type = 'CREDIT_USAGE'), 0) AS usage,
           coalesce(sum(l.debit) FILTER (l.in_period AND l.type = 'EXPIRE_VOID'), 0) AS expired_void,
           coalesce(sum(l.debit) FILTER (l.in_period AND l.type NOT IN ('CREDIT_USAGE', 'EXPIRE_VOID')), 0) AS other_debits,
           coalesce(sum(l.credit - l.debit), 0) AS closing,
           max(l.created_at) AS last_movement_at
    FROM ledger l
    GROUP BY l.account, l.customer_id, l.product_id, l.wallet_type
),
reported AS (
    SELECT j.account, j.customer_id, j.product_id,
           arg_max(j.balance, j.reported_at) AS reported_balance, max(j.reported_at) AS reported_at,
           arg_max(j.action_id, j.reported_at) AS action_id
    FROM credit_balance_reports j, p
    WHERE (account IS NULL OR j.account = account) AND j.reported_at < p.cutoff
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
           r.reported_balance, r.reported_at, r.action_id
    FROM moves m
    FULL JOIN reported r ON r.account = m.account AND r.customer_id = m.customer_id AND r.product_id = m.product_id
)
SELECT k.account, coalesce(c.name, jn.customer_name) AS customer_name,
       coalesce(c.email, jn.customer_email) AS customer_email, k.customer_id,
       coalesce(pr.name, jn.product_name) AS product_name, k.product_id, k.wallet_type,
       k.opening, k.topup, k.merchant_topup, k.trial_topup, k.other_credits,
       k.usage, k.expired_void, k.other_debits, k.closing,
       k.reported_balance, k.reported_at, la.ledger_balance AS ledger_at_report,
       la.ledger_balance - k.reported_balance AS difference,
       f.last_fetched_at AS ledger_fetched_at,
       CASE WHEN k.reported_at IS NULL THEN NULL
            WHEN f.last_fetched_at IS NULL OR f.last_fetched_at < date_trunc('second', k.reported_at) + INTERVAL 1 SECOND
                THEN 'LEDGER OLDER THAN REPORT'
            WHEN la.ledger_balance = k.reported_balance THEN 'OK'
            ELSE 'MISMATCH' END AS reconciliation,
       k.last_movement_at
FROM keyed k
LEFT JOIN customers c ON c.account = k.account AND c.id = k.customer_id
LEFT JOIN products pr ON pr.account = k.account AND pr.id = k.product_id
-- A balance only a job reported, of a customer or product this warehouse copy does not hold, is
-- named as the job's plan saw them (the journal's credit_report_names).
LEFT JOIN credit_report_names jn ON jn.action_id = k.action_id
LEFT JOIN ledger_at_report la ON la.account = k.account AND la.customer_id = k.customer_id AND la.product_id = k.product_id
LEFT JOIN credit_fetch_state f ON f.account = k.account AND f.customer_id = k.customer_id;
