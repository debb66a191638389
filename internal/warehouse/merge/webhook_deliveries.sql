-- Webhook delivery records (GET /hl/v2/webhooks/new-history). Incremental:
-- upserted by id, never marked deleted; status and nextDelivery changes recorded.
-- createdAt is required: the stream's cursor is the newest created_at stored.
-- payload is a JSON-encoded string holding {event, data}: stored parsed as
-- event_type and event_data (the string itself stays in raw).

-- name: project
CREATE OR REPLACE TEMP TABLE projected AS
WITH p AS (
    SELECT seq, page, idx, raw::JSON AS raw, raw_hash, json_transform(raw, '{
        "id": "VARCHAR", "userId": "VARCHAR", "createdAt": "VARCHAR", "updatedAt": "VARCHAR",
        "nextDelivery": "VARCHAR", "payload": "VARCHAR", "paymentLinkId": "VARCHAR",
        "paymentLinkTransactionId": "VARCHAR", "responsePayload": "VARCHAR", "source": "VARCHAR",
        "status": "VARCHAR", "type": "VARCHAR", "Webhooktype": "VARCHAR", "urlDestination": "VARCHAR"}') AS r
    FROM parse_input
), t AS (
    SELECT *, bs_ts(r.createdAt) AS created_at, bs_ts(r.updatedAt) AS updated_at,
           bs_ts(r.nextDelivery) AS next_delivery,
           -- the payload string is parsed once; the raw record keeps it as sent. An unreadable
           -- one fails this parse: the loader then starts over with bs_checked, and only then is
           -- every payload checked first (a second parse that cost a third of this statement)
           CASE WHEN NOT getvariable('bs_checked') OR json_valid(r.payload)
                THEN json_transform(r.payload, '{"event": "VARCHAR", "data": "JSON"}') END AS payload_json
    FROM p
)
SELECT c.account, bs_blank(r.id) AS id,
       r.userId AS user_id, created_at, updated_at, next_delivery,
       payload_json.event AS event_type, payload_json.data AS event_data,
       r.paymentLinkId AS payment_link_id, r.paymentLinkTransactionId AS payment_link_transaction_id,
       r.responsePayload AS response_payload, r.source AS source, r.status AS status, r.type AS type,
       r.Webhooktype AS webhook_type, r.urlDestination AS url_destination,
       raw, raw_hash, c.run_id AS last_seen_run, c.observed_at AS last_seen_at, NULL::TIMESTAMPTZ AS deleted_upstream_at,
       seq AS x_seq, page AS x_page, idx AS x_idx,
       list_filter([
           CASE WHEN r IS NULL THEN 'not a JSON object' END,
           CASE WHEN r IS NOT NULL AND bs_blank(r.id) IS NULL THEN 'id: missing' END,
           -- the cursor moves with the newest createdAt the run stored, parsed here only
           CASE WHEN r IS NOT NULL AND r.createdAt IS NULL THEN 'createdAt: missing' END,
           bs_bad('createdAt', r.createdAt, created_at, 'a timestamp'),
           bs_when('createdAt', r.createdAt, created_at, c.latest_at, c.clocks),
           bs_bad('updatedAt', r.updatedAt, updated_at, 'a timestamp'),
           bs_when('updatedAt', r.updatedAt, updated_at, c.latest_at, c.clocks),
           bs_bad('nextDelivery', r.nextDelivery, next_delivery, 'a timestamp'),
           bs_when('nextDelivery', r.nextDelivery, next_delivery, NULL::TIMESTAMPTZ, NULL::VARCHAR)
       ], x -> x IS NOT NULL) AS x_problems
FROM t, merge_ctx c;
