-- webhook_deliveries_at(as_of[, tz, account, window_days]): the webhook delivery records created in
-- the window_days days up to the end of the day as_of, with the status and next delivery attempt
-- each had at that cutoff.
CREATE OR REPLACE MACRO webhook_deliveries_at(as_of, tz := report_zone(), account := NULL, window_days := 30) AS TABLE
SELECT w.account, w.id, w.created_at, w.updated_at, w.event_type, w.url_destination,
       w.response_payload, w.payment_link_id, w.payment_link_transaction_id,
       CASE WHEN h.known_1 THEN h.value_1 ELSE w.status END AS status,
       CASE WHEN h.known_2 THEN TRY_CAST(h.value_2 AS TIMESTAMPTZ) ELSE w.next_delivery END AS next_delivery
FROM webhook_deliveries w
LEFT JOIN changes_at('webhook_deliveries', end_of_day(as_of, tz), 'status', 'next_delivery',
                     account := account, lifecycle := false) h
       ON h.account = w.account AND h.record_id = w.id
WHERE (account IS NULL OR w.account = account)
  AND w.created_at >= end_of_day(as_of::DATE - window_days::INTEGER, tz)
  AND w.created_at < end_of_day(as_of, tz);
