-- Customer list items (GET /hl/v1/customer).

-- name: project
CREATE OR REPLACE TEMP TABLE projected AS
WITH p AS (
    SELECT seq, page, idx, raw::JSON AS raw, raw_hash, json_transform(raw, '{
        "id": "VARCHAR", "email": "VARCHAR", "mobile": "VARCHAR", "name": "VARCHAR", "status": "VARCHAR",
        "createdAt": "VARCHAR", "updatedAt": "VARCHAR", "updateAt": "VARCHAR", "userId": "VARCHAR"}') AS r
    FROM parse_input
), t AS (
    -- the spec's field description calls it updateAt; accept either name
    SELECT *, bs_ts(r.createdAt) AS created_at, coalesce(r.updatedAt, r.updateAt) AS updated_text,
           bs_ts(coalesce(r.updatedAt, r.updateAt)) AS updated_at
    FROM p
)
SELECT c.account, bs_blank(r.id) AS id,
       r.email AS email, r.mobile AS mobile, r.name AS name, r.status AS status,
       created_at, updated_at, r.userId AS user_id,
       raw, raw_hash, c.run_id AS last_seen_run, c.observed_at AS last_seen_at, NULL::TIMESTAMPTZ AS deleted_upstream_at,
       seq AS x_seq, page AS x_page, idx AS x_idx,
       list_filter([
           CASE WHEN r IS NULL THEN 'not a JSON object' END,
           CASE WHEN r IS NOT NULL AND bs_blank(r.id) IS NULL THEN 'id: missing' END,
           bs_path_id(bs_blank(r.id)),
           bs_bad('createdAt', r.createdAt, created_at, 'a timestamp'),
           bs_when('createdAt', r.createdAt, created_at, c.observed_at + INTERVAL 1 DAY),
           bs_bad('updatedAt', updated_text, updated_at, 'a timestamp'),
           bs_when('updatedAt', updated_text, updated_at, c.observed_at + INTERVAL 1 DAY)
       ], x -> x IS NOT NULL) AS x_problems
FROM t, merge_ctx c;

-- name: changes
INSERT INTO record_changes
SELECT s.account, 'customers', s.id, u.ch.field, u.ch.old_value, u.ch.new_value, s.last_seen_at, s.last_seen_run
FROM incoming s
JOIN customers t ON t.account = s.account AND t.id = s.id,
LATERAL UNNEST([
    {'field': 'status', 'old_value': t.status, 'new_value': s.status},
    {'field': 'name', 'old_value': t.name, 'new_value': s.name},
    {'field': 'email', 'old_value': t.email, 'new_value': s.email},
    {'field': 'mobile', 'old_value': t.mobile, 'new_value': s.mobile}
]) AS u(ch)
WHERE u.ch.old_value IS DISTINCT FROM u.ch.new_value;
