-- Credit balances for a period, per customer, product and wallet type: opening
-- balance, credits by type, debits by type and closing balance, compared with the
-- last balance the service reported in an add-credit response (the warehouse's
-- credit_balances macro, docs/warehouse.md).
--
-- Reads credit_balance_reports, the write-job journal's table, and credit_report_names,
-- the names its plans saw (billsync provides them, empty when there is no journal).
-- By hand, before running this file:
--   ATTACH 'data/billsync-jobs.duckdb' AS journal (READ_ONLY);
--   CREATE TEMP VIEW credit_balance_reports AS SELECT * FROM journal.credit_balance_reports;
--   and credit_report_names as docs/reports.md shows.
-- Parameters (SET VARIABLE name = value; before running this file to change one):
--   as_of         DATE     period end, inclusive (end of this day in tz)   default current_date
--   period_start  DATE     period start, inclusive                         default first day of as_of's month
--   tz            VARCHAR  time zone of the day boundaries                 default report_zone()
--   account       VARCHAR  only this billsync account; NULL = all          default NULL
--
-- A reported balance is compared with the ledger's balance at the moment it was
-- reported, not with the closing balance. The service stamps the report in whole
-- seconds (its Date header) while ledger entries carry milliseconds, so the entry
-- the report answered for is created within that second, after reported_at: the
-- ledger at report counts every entry created before the end of the reported second.
SET VARIABLE as_of = coalesce(getvariable('as_of'), current_date);
SET VARIABLE period_start = coalesce(getvariable('period_start'), date_trunc('month', getvariable('as_of')::DATE)::DATE);
SET VARIABLE tz = coalesce(getvariable('tz'), report_zone());

-- Names sort as in a dictionary: ignoring case, an accented letter with its plain one (Ñ with N,
-- É with E; ICU's Indonesian collation), the ID breaking ties.
-- credits and debits: the period's movements of every type, as the sheet prints them; by type after.
SELECT account, customer_name, customer_email, customer_id, product_name, product_id, wallet_type, opening,
       topup + merchant_topup + trial_topup + other_credits AS credits,
       usage + expired_void + other_debits AS debits, closing,
       topup, merchant_topup, trial_topup, other_credits, usage, expired_void, other_debits,
       reported_balance, reported_at, ledger_at_report, difference, reconciliation, ledger_fetched_at, last_movement_at
FROM credit_balances(getvariable('as_of'), tz := getvariable('tz'), account := getvariable('account'),
                     period_start := getvariable('period_start'))
ORDER BY account, customer_name COLLATE nocase.id NULLS LAST, customer_id, product_name COLLATE nocase.id, product_id, wallet_type;
