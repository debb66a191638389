-- Single payment request list items (GET /hl/v1/payment).

-- name: project
CREATE OR REPLACE TEMP TABLE projected AS
WITH p AS (
    SELECT seq, page, idx, raw::JSON AS raw, raw_hash, json_transform(raw, '{
        "id": "VARCHAR", "amount": "VARCHAR", "category": "VARCHAR", "createdAt": "VARCHAR",
        "description": "VARCHAR", "link": "VARCHAR", "type": "VARCHAR", "status": "VARCHAR",
        "name": "VARCHAR", "limit": "VARCHAR", "redirectUrl": "VARCHAR", "installmentId": "VARCHAR",
        "expiredAt": "VARCHAR"}') AS r
    FROM parse_input
), t AS (
    SELECT *, bs_int(r.amount) AS amount, bs_int(r."limit") AS purchase_limit,
           bs_ts(r.createdAt) AS created_at, bs_ts(r.expiredAt) AS expired_at
    FROM p
)
SELECT c.account, bs_blank(r.id) AS id,
       amount, r.category AS category, created_at, r.description AS description, r.link AS link,
       r.type AS type, r.status AS status, r.name AS name, purchase_limit,
       r.redirectUrl AS redirect_url, r.installmentId AS installment_id, expired_at,
       raw, raw_hash, c.run_id AS last_seen_run, c.observed_at AS last_seen_at, NULL::TIMESTAMPTZ AS deleted_upstream_at,
       seq AS x_seq, page AS x_page, idx AS x_idx,
       list_filter([
           CASE WHEN r IS NULL THEN 'not a JSON object' END,
           CASE WHEN r IS NOT NULL AND bs_blank(r.id) IS NULL THEN 'id: missing' END,
           bs_path_id(bs_blank(r.id)),
           bs_bad('amount', r.amount, amount, 'an integer'),
           bs_bad('limit', r."limit", purchase_limit, 'an integer'),
           bs_bad('createdAt', r.createdAt, created_at, 'a timestamp'),
           bs_when('createdAt', r.createdAt, created_at, c.observed_at + INTERVAL 1 DAY),
           bs_bad('expiredAt', r.expiredAt, expired_at, 'a timestamp'),
           bs_when('expiredAt', r.expiredAt, expired_at, NULL::TIMESTAMPTZ)
       ], x -> x IS NOT NULL) AS x_problems
FROM t, merge_ctx c;

-- name: changes
INSERT INTO record_changes
SELECT s.account, 'payment_requests', s.id, u.ch.field, u.ch.old_value, u.ch.new_value, s.last_seen_at, s.last_seen_run
FROM incoming s
JOIN payment_requests t ON t.account = s.account AND t.id = s.id,
LATERAL UNNEST([
    {'field': 'status', 'old_value': t.status, 'new_value': s.status},
    {'field': 'amount', 'old_value': t.amount::VARCHAR, 'new_value': s.amount::VARCHAR},
    {'field': 'name', 'old_value': t.name, 'new_value': s.name}
]) AS u(ch)
WHERE u.ch.old_value IS DISTINCT FROM u.ch.new_value;
