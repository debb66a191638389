-- collection_items(as_of[, tz, account, months]): the invoices and payment requests issued (created)
-- in the `months` months up to as_of's month (in tz), each with what it was at the end of the day
-- as_of: status_then ('deleted' when its last lifecycle row by then was '_deleted'), and when
-- billsync first observed it paid, closed or deleted by then. The API has no paid-at time: paid_at
-- is when billsync first observed the status 'paid' (precision: the sync interval); days_to_pay
-- counts from creation to it, for items paid with an observed transition.
CREATE OR REPLACE MACRO collection_items(as_of, tz := report_zone(), account := NULL, months := 12) AS TABLE
WITH p AS (
    SELECT end_of_day(as_of, tz) AS cutoff,
           timezone(tz, (date_trunc('month', as_of::DATE) - to_months(months::INTEGER - 1))::TIMESTAMP) AS first_month_at
),
seen AS (
    SELECT c.account, c.entity, c.record_id,
           min(c.observed_at) FILTER (c.field = 'status' AND c.new_value = 'paid') AS paid_at,
           min(c.observed_at) FILTER (c.field = 'status' AND c.new_value = 'closed') AS closed_at,
           min(c.observed_at) FILTER (c.field = '_deleted') AS deleted_at
    FROM record_changes c, p
    WHERE c.entity IN ('invoices', 'payment_requests') AND c.observed_at <= p.cutoff
      AND (c.field = 'status' AND c.new_value IN ('paid', 'closed') OR c.field = '_deleted')
      AND (account IS NULL OR c.account = account)
    GROUP BY c.account, c.entity, c.record_id
),
issued AS (
    SELECT i.account, 'invoice' AS kind, i.id, i.name, i.customer_name, i.customer_email, i.created_at, i.amount,
           CASE WHEN h.deleted THEN 'deleted' WHEN h.known_1 THEN h.value_1 ELSE i.status END AS status_then,
           s.paid_at, s.closed_at, s.deleted_at
    FROM invoices i
    LEFT JOIN changes_at('invoices', end_of_day(as_of, tz), 'status', account := account) h
           ON h.account = i.account AND h.record_id = i.id
    LEFT JOIN seen s ON s.account = i.account AND s.entity = 'invoices' AND s.record_id = i.id
    UNION ALL
    SELECT r.account, 'payment request', r.id, r.name, r.name, NULL, r.created_at, r.amount,
           CASE WHEN h.deleted THEN 'deleted' WHEN h.known_1 THEN h.value_1 ELSE r.status END,
           s.paid_at, s.closed_at, s.deleted_at
    FROM payment_requests r
    LEFT JOIN changes_at('payment_requests', end_of_day(as_of, tz), 'status', account := account) h
           ON h.account = r.account AND h.record_id = r.id
    LEFT JOIN seen s ON s.account = r.account AND s.entity = 'payment_requests' AND s.record_id = r.id
)
SELECT s.account, s.kind, s.id, s.name, s.customer_name, s.customer_email, s.amount, s.created_at,
       s.paid_at, s.closed_at,
       date_trunc('month', local_time(s.created_at, tz))::DATE AS month,
       s.status_then, s.deleted_at,
       CASE WHEN s.status_then = 'paid' AND s.paid_at IS NOT NULL
            THEN round(seconds_between(s.created_at, s.paid_at) / 86400, 1) END AS days_to_pay
FROM issued s, p
WHERE (account IS NULL OR s.account = account)
  AND s.created_at < p.cutoff
  AND s.created_at >= p.first_month_at;
