-- Collections per month: invoices and payment requests issued in the month (of
-- creation, in tz) and what became of them by the end of the as-of date: paid,
-- closed or expired unpaid, still open; days to pay from observed transitions
-- (the warehouse's collection_items macro, docs/warehouse.md).
--
-- Parameters (SET VARIABLE name = value; before running this file to change one):
--   as_of    DATE     report date (end of this day in tz)          default current_date
--   tz       VARCHAR  time zone of months and the day boundary     default report_zone()
--   account  VARCHAR  only this billsync account; NULL = all       default NULL
--   months   INTEGER  how many months, the as-of month included    default 12
--
-- The API has no paid-at time: paid_at is when billsync first observed the
-- status 'paid' (precision: the sync interval). Items already paid at their
-- first sync have no days to pay.
SET VARIABLE as_of = coalesce(getvariable('as_of'), current_date);
SET VARIABLE tz = coalesce(getvariable('tz'), report_zone());
SET VARIABLE months = coalesce(getvariable('months'), 12);

SELECT account, month,
       count(*) AS issued,
       sum(amount)::BIGINT AS issued_amount,
       count(*) FILTER (status_then = 'paid') AS paid,
       coalesce(sum(amount) FILTER (status_then = 'paid'), 0)::BIGINT AS paid_amount,
       coalesce(sum(amount) FILTER (status_then = 'paid'), 0) / nullif(sum(amount), 0) AS collected_pct,
       round(avg(days_to_pay), 1) AS avg_days_to_pay,
       round(median(days_to_pay), 1) AS median_days_to_pay,
       count(*) FILTER (status_then = 'closed') AS closed_unpaid,
       coalesce(sum(amount) FILTER (status_then = 'closed'), 0)::BIGINT AS closed_unpaid_amount,
       count(*) FILTER (status_then IN ('active', 'unpaid')) AS open,
       coalesce(sum(amount) FILTER (status_then IN ('active', 'unpaid')), 0)::BIGINT AS open_amount,
       count(*) FILTER (status_then = 'deleted') AS deleted,
       coalesce(sum(amount) FILTER (status_then = 'deleted'), 0)::BIGINT AS deleted_amount
FROM collection_items(getvariable('as_of'), tz := getvariable('tz'), account := getvariable('account'),
                      months := getvariable('months'))
GROUP BY account, month
ORDER BY account, month;
