-- Collections per month: invoices and payment requests issued in the month (of
-- creation, in tz) and what became of them by the end of the as-of date: paid,
-- closed or expired unpaid, still open; days to pay from observed transitions.
--
-- Parameters (SET VARIABLE name = value; before running this file to change one):
--   as_of    DATE     report date (end of this day in tz)          default current_date
--   tz       VARCHAR  time zone of months and the day boundary     default 'Asia/Jakarta'
--   account  VARCHAR  only this billsync account; NULL = all       default NULL
--   months   INTEGER  how many months, the as-of month included    default 12
--
-- The API has no paid-at time: paid_at is when billsync first observed the
-- status 'paid' (precision: the sync interval). Items already paid at their
-- first sync have no days to pay.
SET VARIABLE as_of = coalesce(getvariable('as_of'), current_date);
SET VARIABLE tz = coalesce(getvariable('tz'), 'Asia/Jakarta');
SET VARIABLE months = coalesce(getvariable('months'), 12);

-- BEGIN collection_items (identical in every collections_*.sql)
WITH params AS (
    SELECT getvariable('as_of')::DATE AS as_of,
           timezone(getvariable('tz'), (getvariable('as_of')::DATE + 1)::TIMESTAMP) AS cutoff,
           getvariable('tz')::VARCHAR AS tz,
           getvariable('account')::VARCHAR AS account,
           date_trunc('month', getvariable('as_of')::DATE) - to_months(getvariable('months')::INTEGER - 1) AS first_month,
           timezone(getvariable('tz'), first_month::TIMESTAMP) AS first_month_at
),
hist AS (
    SELECT c.account, c.entity, c.record_id,
           arg_max(c.field, c.observed_at) FILTER (c.field IN ('_created', '_deleted', '_restored') AND c.observed_at <= p.cutoff) AS life,
           arg_max({v: c.new_value}, c.observed_at) FILTER (c.field = 'status' AND c.observed_at <= p.cutoff) AS status_before,
           arg_min({v: c.old_value}, c.observed_at) FILTER (c.field = 'status' AND c.observed_at > p.cutoff) AS status_after,
           min(c.observed_at) FILTER (c.field = 'status' AND c.new_value = 'paid' AND c.observed_at <= p.cutoff) AS paid_at,
           min(c.observed_at) FILTER (c.field = 'status' AND c.new_value = 'closed' AND c.observed_at <= p.cutoff) AS closed_at,
           min(c.observed_at) FILTER (c.field = '_deleted' AND c.observed_at <= p.cutoff) AS deleted_at
    FROM record_changes c, params p
    WHERE c.entity IN ('invoices', 'payment_requests') AND c.field IN ('status', '_created', '_deleted', '_restored')
      AND (p.account IS NULL OR c.account = p.account)
    GROUP BY c.account, c.entity, c.record_id
),
issued AS (
    SELECT i.account, 'invoice' AS kind, i.id, i.name, i.customer_name, i.customer_email, i.created_at, i.amount,
           i.status, i.first_seen_at, h.life, h.status_before, h.status_after, h.paid_at, h.closed_at, h.deleted_at
    FROM invoices i LEFT JOIN hist h ON h.account = i.account AND h.entity = 'invoices' AND h.record_id = i.id
    UNION ALL
    SELECT r.account, 'payment request', r.id, r.name, r.name, NULL, r.created_at, r.amount,
           r.status, r.first_seen_at, h.life, h.status_before, h.status_after, h.paid_at, h.closed_at, h.deleted_at
    FROM payment_requests r LEFT JOIN hist h ON h.account = r.account AND h.entity = 'payment_requests' AND h.record_id = r.id
),
items AS (
    SELECT s.account, s.kind, s.id, s.name, s.customer_name, s.customer_email, s.amount, s.created_at, s.paid_at, s.closed_at,
           -- getvariable(), a constant, not p.tz: with a zone from a column
           -- timezone() looks it up again for every row (twice as slow)
           date_trunc('month', timezone(getvariable('tz'), s.created_at))::DATE AS month,
           CASE WHEN s.life = '_deleted' THEN 'deleted'
                WHEN s.status_before IS NOT NULL THEN s.status_before.v
                WHEN s.status_after IS NOT NULL THEN s.status_after.v
                ELSE s.status END AS status_then,
           s.deleted_at,
           -- paid with an observed transition: days from creation to the first sync that saw it paid
           CASE WHEN status_then = 'paid' AND s.paid_at IS NOT NULL
                THEN round(epoch(s.paid_at - s.created_at) / 86400, 1) END AS days_to_pay
    FROM issued s, params p
    WHERE (p.account IS NULL OR s.account = p.account)
      AND s.created_at < p.cutoff
      AND s.created_at >= p.first_month_at
)
-- END collection_items
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
FROM items
GROUP BY account, month
ORDER BY account, month;
