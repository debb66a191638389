-- How fresh billsync's copy of the credit ledger is, in a few figures for the
-- credit summary: per freshness state (the warehouse's credit_freshness macro, as
-- credit_freshness.sql lists it per customer), how many customers, and how old
-- their copies are (oldest, median and 95th percentile, days).
--
-- Reads credit_balance_reports from the write-job journal (see credit_balances.sql).
-- Parameters (SET VARIABLE name = value; before running this file to change one):
--   as_of    DATE     report date (end of this day in tz; never later than now)  default current_date
--   tz       VARCHAR  time zone of the day boundary                              default report_zone()
--   account  VARCHAR  only this billsync account; NULL = all                     default NULL
SET VARIABLE as_of = coalesce(getvariable('as_of'), current_date);
SET VARIABLE tz = coalesce(getvariable('tz'), report_zone());

SELECT x.account, x.freshness, count(*) AS customers,
       round(max(x.days_old), 1) AS oldest_days,
       round(median(x.days_old), 1) AS median_days,
       round(quantile_cont(x.days_old, 0.95), 1) AS p95_days
FROM credit_freshness(getvariable('as_of'), tz := getvariable('tz'), account := getvariable('account')) x
GROUP BY x.account, x.freshness
ORDER BY x.account, CASE x.freshness WHEN 'NEVER FETCHED' THEN 0 WHEN 'OLDER THAN LAST REPORT' THEN 1 ELSE 2 END;
