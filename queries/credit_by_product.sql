-- Credit per product and wallet type for the period: how many customers hold
-- it, opening balance, credits, debits and closing balance, and how many
-- reported balances were compared with the ledger and how many of those do not
-- match (NULL when none could be compared). Credit units of different
-- products are different things: they are never added across products.
--
-- Same parameters and journal table as credit_balances.sql, whose result (the
-- warehouse's credit_balances macro) this file aggregates.
SET VARIABLE as_of = coalesce(getvariable('as_of'), current_date);
SET VARIABLE period_start = coalesce(getvariable('period_start'), date_trunc('month', getvariable('as_of')::DATE)::DATE);
SET VARIABLE tz = coalesce(getvariable('tz'), report_zone());

-- Names sort as in a dictionary: ignoring case, an accented letter with its plain one (Ñ with N,
-- É with E; ICU's Indonesian collation), the ID breaking ties: a product's wallets stay together.
SELECT account, product_name, wallet_type, product_id,
       count(DISTINCT customer_id) AS customers,
       -- counts of customers, not balances: one row per customer, product and wallet
       count(*) FILTER (reported_at IS NOT NULL) AS customers_reported,
       -- a reported balance is compared only when the ledger copy is newer than the report
       count(*) FILTER (reconciliation IN ('OK', 'MISMATCH')) AS customers_compared,
       -- NULL when none was compared: 0 mismatches would read as checked and fine
       CASE WHEN count(*) FILTER (reconciliation IN ('OK', 'MISMATCH')) > 0
            THEN count(*) FILTER (reconciliation = 'MISMATCH') END AS mismatches,
       sum(opening) AS opening,
       sum(topup + merchant_topup + trial_topup + other_credits) AS credits,
       sum(usage + expired_void + other_debits) AS debits,
       sum(closing) AS closing
FROM credit_balances(getvariable('as_of'), tz := getvariable('tz'), account := getvariable('account'),
                     period_start := getvariable('period_start'))
GROUP BY account, product_name, wallet_type, product_id
ORDER BY account, product_name COLLATE nocase.id NULLS LAST, product_id, wallet_type;
