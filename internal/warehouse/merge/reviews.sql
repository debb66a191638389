-- Reviews (GET /hl/v1/reviews).

-- name: project
CREATE OR REPLACE TEMP TABLE projected AS
WITH p AS (
    SELECT seq, page, idx, raw::JSON AS raw, raw_hash, json_transform(raw, '{
        "id": "VARCHAR", "createdAt": "VARCHAR", "updatedAt": "VARCHAR", "customerId": "VARCHAR",
        "message": "VARCHAR", "paymentLinkId": "VARCHAR", "rating": "VARCHAR", "status": "VARCHAR",
        "userId": "VARCHAR", "customer": {"id": "VARCHAR", "name": "VARCHAR"},
        "paymentLink": {"id": "VARCHAR", "name": "VARCHAR", "type": "VARCHAR"}}') AS r
    FROM parse_input
), t AS (
    SELECT *, bs_ts(r.createdAt) AS created_at, bs_ts(r.updatedAt) AS updated_at, bs_num(r.rating) AS rating
    FROM p
)
SELECT c.account, bs_blank(r.id) AS id,
       created_at, updated_at, coalesce(r.customerId, r.customer.id) AS customer_id,
       r.customer.name AS customer_name, r.message AS message,
       coalesce(r.paymentLinkId, r.paymentLink.id) AS payment_link_id,
       r.paymentLink.name AS product_name, r.paymentLink.type AS product_type,
       rating, r.status AS status, r.userId AS user_id,
       raw, raw_hash, c.run_id AS last_seen_run, c.observed_at AS last_seen_at, NULL::TIMESTAMPTZ AS deleted_upstream_at,
       seq AS x_seq, page AS x_page, idx AS x_idx,
       list_filter([
           CASE WHEN r IS NULL THEN 'not a JSON object' END,
           CASE WHEN r IS NOT NULL AND bs_blank(r.id) IS NULL THEN 'id: missing' END,
           bs_bad('rating', r.rating, rating, 'a number'),
           bs_bad('createdAt', r.createdAt, created_at, 'a timestamp'),
           bs_when('createdAt', r.createdAt, created_at, c.observed_at + INTERVAL 1 DAY),
           bs_bad('updatedAt', r.updatedAt, updated_at, 'a timestamp'),
           bs_when('updatedAt', r.updatedAt, updated_at, c.observed_at + INTERVAL 1 DAY)
       ], x -> x IS NOT NULL) AS x_problems
FROM t, merge_ctx c;

-- name: changes
INSERT INTO record_changes
SELECT s.account, 'reviews', s.id, u.ch.field, u.ch.old_value, u.ch.new_value, s.last_seen_at, s.last_seen_run
FROM incoming s
JOIN reviews t ON t.account = s.account AND t.id = s.id,
LATERAL UNNEST([
    {'field': 'status', 'old_value': t.status, 'new_value': s.status},
    {'field': 'rating', 'old_value': t.rating::VARCHAR, 'new_value': s.rating::VARCHAR}
]) AS u(ch)
WHERE u.ch.old_value IS DISTINCT FROM u.ch.new_value;
