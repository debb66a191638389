-- open_items(as_of[, tz]): what customers owed at the end of the day as_of (local day in tz), the
-- items of aging_items, all accounts: a past date is answered from record_changes, and before the
-- first sync billsync knows nothing of records already gone. A payment request's name is its own
-- (whom it was made out to), also where it is listed as an unpaid transaction.
CREATE OR REPLACE MACRO open_items(as_of, tz := report_zone()) AS TABLE
SELECT a.account, a.source, a.id, a.payment_link_id,
       CASE WHEN a.type = 'payment_request' THEN a.customer_name ELSE a.name END AS name,
       a.customer_id, a.customer_name, a.customer_email, a.created_at, a.expired_at, a.amount, a.payment_url
FROM aging_items(as_of, tz := tz) a;
