-- Freshness of each customer's copy of the credit ledger: billsync reads credit
-- history per customer on a budget, so some copies are older than others (the
-- warehouse's credit_freshness macro, docs/warehouse.md).
--
-- Reads credit_balance_reports from the write-job journal (see credit_balances.sql).
-- Parameters (SET VARIABLE name = value; before running this file to change one):
--   as_of    DATE     report date (end of this day in tz; never later than now)  default current_date
--   tz       VARCHAR  time zone of the day boundary                              default report_zone()
--   account  VARCHAR  only this billsync account; NULL = all                     default NULL
SET VARIABLE as_of = coalesce(getvariable('as_of'), current_date);
SET VARIABLE tz = coalesce(getvariable('tz'), report_zone());

-- Names sort as in a dictionary: ignoring case, an accented letter with its plain one (Ñ with N,
-- É with E; ICU's Indonesian collation), the ID breaking ties.
SELECT x.account, c.name AS customer_name, c.email AS customer_email, x.customer_id,
       x.last_fetched_at AS ledger_fetched_at, round(x.days_old, 1) AS fetched_days_ago,
       x.entries, x.products, x.last_movement_at, x.last_reported_at, x.freshness
FROM credit_freshness(getvariable('as_of'), tz := getvariable('tz'), account := getvariable('account')) x
LEFT JOIN customers c ON c.account = x.account AND c.id = x.customer_id
ORDER BY x.account, fetched_days_ago DESC NULLS FIRST, c.name COLLATE nocase.id, x.customer_id;
