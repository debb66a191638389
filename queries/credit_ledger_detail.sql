-- Credit ledger detail: every ledger entry of the period with the balance of its
-- customer, product and wallet after the entry (entries before the period count
-- towards that running balance but are not listed).
--
-- Parameters (SET VARIABLE name = value; before running this file to change one):
--   as_of         DATE     period end, inclusive (end of this day in tz)   default current_date
--   period_start  DATE     period start, inclusive                         default first day of as_of's month
--   tz            VARCHAR  time zone of the day boundaries                 default report_zone()
--   account       VARCHAR  only this billsync account; NULL = all          default NULL
SET VARIABLE as_of = coalesce(getvariable('as_of'), current_date);
SET VARIABLE period_start = coalesce(getvariable('period_start'), date_trunc('month', getvariable('as_of')::DATE)::DATE);
SET VARIABLE tz = coalesce(getvariable('tz'), report_zone());

-- Names sort as in a dictionary: ignoring case, an accented letter with its plain one (Ñ with N,
-- É with E; ICU's Indonesian collation), the ID breaking ties.
WITH params AS (
    SELECT timezone(getvariable('tz'), getvariable('period_start')::DATE::TIMESTAMP) AS start_at,
           end_of_day(getvariable('as_of'), getvariable('tz')) AS cutoff,
           getvariable('account')::VARCHAR AS account
),
-- Each wallet's balance before the period is summed once, and the running sum runs over the
-- period's entries only (summing every entry ever in a window took most of this query's time).
-- NULL amounts count as the window's sum counts them: the balance is NULL only while no entry
-- so far has an amount.
opening AS (
    SELECT l.account, l.customer_id, l.product_id, l.wallet_type, sum(l.credit - l.debit) AS balance
    FROM credit_ledger l, params p
    WHERE (p.account IS NULL OR l.account = p.account) AND l.created_at < p.start_at
    GROUP BY l.account, l.customer_id, l.product_id, l.wallet_type
),
period AS (
    SELECT l.*, sum(l.credit - l.debit) OVER (
               PARTITION BY l.account, l.customer_id, l.product_id, l.wallet_type
               ORDER BY l.created_at, l.id ROWS UNBOUNDED PRECEDING) AS in_period
    FROM credit_ledger l, params p
    WHERE (p.account IS NULL OR l.account = p.account) AND l.created_at >= p.start_at AND l.created_at < p.cutoff
),
running AS (
    SELECT l.* EXCLUDE (in_period),
           CASE WHEN l.in_period IS NULL THEN o.balance
                WHEN o.balance IS NULL THEN l.in_period
                ELSE o.balance + l.in_period END AS balance_after
    FROM period l
    LEFT JOIN opening o ON o.account = l.account AND o.customer_id IS NOT DISTINCT FROM l.customer_id
         AND o.product_id IS NOT DISTINCT FROM l.product_id AND o.wallet_type IS NOT DISTINCT FROM l.wallet_type
)
SELECT r.account, c.name AS customer_name, c.email AS customer_email, r.customer_id,
       pr.name AS product_name, r.product_id, r.wallet_type,
       r.created_at, r.type, r.credit, r.debit, r.balance_after, r.expired_at, r.status, r.id
FROM running r
LEFT JOIN customers c ON c.account = r.account AND c.id = r.customer_id
LEFT JOIN products pr ON pr.account = r.account AND pr.id = r.product_id
ORDER BY r.account, c.name COLLATE nocase.id NULLS LAST, r.customer_id, pr.name COLLATE nocase.id, r.product_id, r.wallet_type, r.created_at, r.id;
