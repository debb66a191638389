-- Unpaid transactions (GET /hl/v1/transactions/unpaid). A row that leaves the
-- full list was paid or expired; deleted_upstream_at says when that was noticed.

-- name: project
CREATE OR REPLACE TEMP TABLE projected AS
WITH p AS (
    SELECT seq, page, idx, raw::JSON AS raw, raw_hash, json_transform(raw, '{
        "id": "VARCHAR", "createdAt": "VARCHAR", "type": "VARCHAR", "amount": "VARCHAR", "status": "VARCHAR",
        "paymentLinkId": "VARCHAR", "customerId": "VARCHAR", "paymentUrl": "VARCHAR", "expiredAt": "VARCHAR",
        "customer": {"id": "VARCHAR", "email": "VARCHAR", "name": "VARCHAR", "mobile": "VARCHAR"},
        "paymentLink": {"id": "VARCHAR", "name": "VARCHAR"}}') AS r
    FROM parse_input
), t AS (
    SELECT *, bs_int(r.amount) AS amount, bs_ts(r.createdAt) AS created_at, bs_ts(r.expiredAt) AS expired_at
    FROM p
)
SELECT c.account, bs_blank(r.id) AS id,
       created_at, r.type AS type, amount, r.status AS status,
       coalesce(r.paymentLinkId, r.paymentLink.id) AS payment_link_id,
       coalesce(r.customerId, r.customer.id) AS customer_id, r.customer.email AS customer_email,
       r.customer.name AS customer_name, r.customer.mobile AS customer_mobile,
       r.paymentLink.name AS payment_link_name, r.paymentUrl AS payment_url, expired_at,
       raw, raw_hash, c.run_id AS last_seen_run, c.observed_at AS last_seen_at, NULL::TIMESTAMPTZ AS deleted_upstream_at,
       seq AS x_seq, page AS x_page, idx AS x_idx,
       list_filter([
           CASE WHEN r IS NULL THEN 'not a JSON object' END,
           CASE WHEN r IS NOT NULL AND bs_blank(r.id) IS NULL THEN 'id: missing' END,
           bs_bad('amount', r.amount, amount, 'an integer'),
           bs_bad('createdAt', r.createdAt, created_at, 'a timestamp'),
           bs_when('createdAt', r.createdAt, created_at, c.observed_at + INTERVAL 1 DAY),
           bs_bad('expiredAt', r.expiredAt, expired_at, 'a timestamp'),
           bs_when('expiredAt', r.expiredAt, expired_at, NULL::TIMESTAMPTZ)
       ], x -> x IS NOT NULL) AS x_problems
FROM t, merge_ctx c;

-- name: changes
INSERT INTO record_changes
SELECT s.account, 'unpaid_transactions', s.id, u.ch.field, u.ch.old_value, u.ch.new_value, s.last_seen_at, s.last_seen_run
FROM incoming s
JOIN unpaid_transactions t ON t.account = s.account AND t.id = s.id,
LATERAL UNNEST([
    {'field': 'status', 'old_value': t.status, 'new_value': s.status},
    {'field': 'amount', 'old_value': t.amount::VARCHAR, 'new_value': s.amount::VARCHAR}
]) AS u(ch)
WHERE u.ch.old_value IS DISTINCT FROM u.ch.new_value;
