-- Reported balances reconciled with the ledger: each customer, product and
-- wallet type for which an add-credit job received a balance from the service
-- (credit_balance_reports) before the period's end, with that balance, the
-- ledger's balance at the moment it was reported, their difference and the
-- verdict (the warehouse's credit_balances macro, as credit_balances.sql lists
-- every balance). No rows when no top-up was journaled.
--
-- Same parameters and journal table as credit_balances.sql.
SET VARIABLE as_of = coalesce(getvariable('as_of'), current_date);
SET VARIABLE period_start = coalesce(getvariable('period_start'), date_trunc('month', getvariable('as_of')::DATE)::DATE);
SET VARIABLE tz = coalesce(getvariable('tz'), report_zone());

-- Names sort as in a dictionary: ignoring case, an accented letter with its plain one (Ñ with N,
-- É with E; ICU's Indonesian collation), the ID breaking ties.
SELECT account, customer_name, customer_email, customer_id, product_name, product_id, wallet_type,
       closing, reported_balance, reported_at, ledger_at_report, difference, reconciliation, ledger_fetched_at
FROM credit_balances(getvariable('as_of'), tz := getvariable('tz'), account := getvariable('account'),
                     period_start := getvariable('period_start'))
WHERE reported_at IS NOT NULL
ORDER BY account, customer_name COLLATE nocase.id NULLS LAST, customer_id, product_name COLLATE nocase.id, product_id, wallet_type;
