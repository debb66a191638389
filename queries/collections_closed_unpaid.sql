-- Closed or expired unpaid: the invoices and payment requests issued in the
-- report's months that were closed without payment (or deleted upstream) by the
-- end of the as-of date, newest first (the warehouse's collection_items macro,
-- docs/warehouse.md).
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

-- customer_id is the invoice's (a payment request has no customer): two customers of one name
-- are told apart by it. A lookup per closed item: a join with invoices made the optimizer give up
-- the macro's filters (0.7 s became 16 s on a million records).
SELECT c.account, c.kind, c.status_then AS status, c.month, c.created_at,
       coalesce(c.closed_at, c.deleted_at) AS closed_observed_at,
       c.name, c.customer_name, c.customer_email,
       (SELECT i.customer_id FROM invoices i WHERE c.kind = 'invoice' AND i.account = c.account AND i.id = c.id) AS customer_id,
       c.amount, c.id
FROM collection_items(getvariable('as_of'), tz := getvariable('tz'), account := getvariable('account'),
                      months := getvariable('months')) c
WHERE c.status_then IN ('closed', 'deleted')
ORDER BY c.account, c.created_at DESC, c.id;
