-- Invoices list items (GET /hl/v1/invoice). Typed columns from the raw JSON,
-- parsed once per record; x_* columns are merge helpers, not stored.

-- name: project
CREATE OR REPLACE TEMP TABLE projected AS
WITH p AS (
    SELECT seq, page, idx, raw::JSON AS raw, raw_hash, json_transform(raw, '{
        "id": "VARCHAR", "amount": "VARCHAR", "category": "VARCHAR", "createdAt": "VARCHAR",
        "description": "VARCHAR", "link": "VARCHAR", "type": "VARCHAR", "status": "VARCHAR",
        "name": "VARCHAR", "redirectUrl": "VARCHAR", "customerId": "VARCHAR", "expiredAt": "VARCHAR",
        "customer": {"id": "VARCHAR", "email": "VARCHAR", "name": "VARCHAR", "mobile": "VARCHAR"},
        "transactions": "JSON"}') AS r
    FROM parse_input
), t AS (
    SELECT *, bs_int(r.amount) AS amount, bs_ts(r.createdAt) AS created_at, bs_ts(r.expiredAt) AS expired_at
    FROM p
)
SELECT c.account, bs_blank(r.id) AS id,
       amount, r.category AS category, created_at, r.description AS description, r.link AS link,
       r.type AS type, r.status AS status, r.name AS name, r.redirectUrl AS redirect_url,
       coalesce(r.customerId, r.customer.id) AS customer_id, r.customer.email AS customer_email,
       r.customer.name AS customer_name, r.customer.mobile AS customer_mobile, expired_at,
       raw, raw_hash, c.run_id AS last_seen_run, c.observed_at AS last_seen_at, NULL::TIMESTAMPTZ AS deleted_upstream_at,
       seq AS x_seq, page AS x_page, idx AS x_idx,
       CASE WHEN json_type(r.transactions) = 'ARRAY' THEN r.transactions END AS x_transactions,
       list_filter([
           CASE WHEN r IS NULL THEN 'not a JSON object' END,
           CASE WHEN r IS NOT NULL AND bs_blank(r.id) IS NULL THEN 'id: missing' END,
           bs_bad('amount', r.amount, amount, 'an integer'),
           bs_bad('createdAt', r.createdAt, created_at, 'a timestamp'),
           bs_when('createdAt', r.createdAt, created_at, c.latest_at, c.clocks),
           bs_bad('expiredAt', r.expiredAt, expired_at, 'a timestamp'),
           bs_when('expiredAt', r.expiredAt, expired_at, NULL::TIMESTAMPTZ, NULL::VARCHAR),
           CASE WHEN r.transactions IS NOT NULL AND json_type(r.transactions) <> 'ARRAY'
                THEN 'transactions: not an array' END
       ], x -> x IS NOT NULL) AS x_problems
FROM t, merge_ctx c;
