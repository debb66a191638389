-- Webhook deliveries that need attention: records of the window that were not
-- delivered successfully at the end of the as-of date (failed, or pending with
-- the next delivery attempt), oldest first.
--
-- Parameters (SET VARIABLE name = value; before running this file to change one):
--   as_of        DATE     report date (end of this day in tz)      default current_date
--   tz           VARCHAR  time zone of the day boundary            default 'Asia/Jakarta'
--   account      VARCHAR  only this billsync account; NULL = all   default NULL
--   window_days  INTEGER  how many days of records                 default 30
SET VARIABLE as_of = coalesce(getvariable('as_of'), current_date);
SET VARIABLE tz = coalesce(getvariable('tz'), 'Asia/Jakarta');
SET VARIABLE window_days = coalesce(getvariable('window_days'), 30);

-- BEGIN deliveries_then (identical in every webhooks_*.sql)
WITH params AS (
    SELECT timezone(getvariable('tz'), (getvariable('as_of')::DATE + 1)::TIMESTAMP) AS cutoff,
           timezone(getvariable('tz'), (getvariable('as_of')::DATE + 1 - getvariable('window_days')::INTEGER)::TIMESTAMP) AS window_start,
           getvariable('account')::VARCHAR AS account
),
hist AS (
    SELECT c.account, c.record_id,
           arg_max({v: c.new_value}, c.observed_at) FILTER (c.field = 'status' AND c.observed_at <= p.cutoff) AS status_before,
           arg_min({v: c.old_value}, c.observed_at) FILTER (c.field = 'status' AND c.observed_at > p.cutoff) AS status_after,
           arg_max({v: c.new_value}, c.observed_at) FILTER (c.field = 'next_delivery' AND c.observed_at <= p.cutoff) AS next_before,
           arg_min({v: c.old_value}, c.observed_at) FILTER (c.field = 'next_delivery' AND c.observed_at > p.cutoff) AS next_after
    FROM record_changes c, params p
    WHERE c.entity = 'webhook_deliveries' AND c.field IN ('status', 'next_delivery')
      AND (p.account IS NULL OR c.account = p.account)
    GROUP BY c.account, c.record_id
),
deliveries AS (
    SELECT w.account, w.id, w.created_at, w.updated_at, w.event_type, w.url_destination,
           w.response_payload, w.payment_link_id, w.payment_link_transaction_id,
           CASE WHEN h.status_before IS NOT NULL THEN h.status_before.v
                WHEN h.status_after IS NOT NULL THEN h.status_after.v
                ELSE w.status END AS status,
           CASE WHEN h.next_before IS NOT NULL THEN TRY_CAST(h.next_before.v AS TIMESTAMPTZ)
                WHEN h.next_after IS NOT NULL THEN TRY_CAST(h.next_after.v AS TIMESTAMPTZ)
                ELSE w.next_delivery END AS next_delivery
    FROM webhook_deliveries w
    JOIN params p ON (p.account IS NULL OR w.account = p.account)
                 AND w.created_at >= p.window_start AND w.created_at < p.cutoff
    LEFT JOIN hist h ON h.account = w.account AND h.record_id = w.id
)
-- END deliveries_then
SELECT account, created_at, event_type, url_destination, status, next_delivery, updated_at,
       response_payload, payment_link_id, payment_link_transaction_id, id
FROM deliveries
WHERE status <> 'SUCCESS'
ORDER BY account, created_at, id;
