-- Products from all 19 GET /hl/v1/product/type/{type} streams (and search),
-- merged by one loader. user_id, qty and detail_fetched_at come from
-- product_details and are left untouched here.

-- name: project
CREATE OR REPLACE TEMP TABLE projected AS
WITH p AS (
    SELECT seq, page, idx, raw::JSON AS raw, raw_hash, json_transform(raw, '{
        "id": "VARCHAR", "name": "VARCHAR", "type": "VARCHAR", "subType": "VARCHAR", "status": "VARCHAR",
        "amount": "VARCHAR", "category": "VARCHAR", "description": "VARCHAR", "link": "VARCHAR",
        "limit": "VARCHAR", "redirectUrl": "VARCHAR", "installmentId": "VARCHAR", "createdAt": "VARCHAR",
        "linkUrl": "VARCHAR", "linkPayment": "VARCHAR", "membershipTier": "JSON", "event": "JSON",
        "order": "JSON", "coverImage": "JSON", "multipleImage": "JSON", "variants": "JSON", "variant": "JSON"}') AS r
    FROM parse_input
), t AS (
    SELECT *, bs_int(r.amount) AS amount, bs_int(r."limit") AS purchase_limit, bs_ts(r.createdAt) AS created_at,
           bs_variants(r.variants, r.variant, raw) AS variants
    FROM p
)
SELECT c.account, bs_blank(r.id) AS id,
       r.name AS name, r.type AS type, r.subType AS sub_type, r.status AS status, amount,
       r.category AS category, r.description AS description, r.link AS link, purchase_limit,
       r.redirectUrl AS redirect_url, r.installmentId AS installment_id, created_at,
       r.linkUrl AS link_url, r.linkPayment AS link_payment, r.membershipTier AS membership_tier,
       r.event AS event, r."order" AS "order", r.coverImage AS cover_image, r.multipleImage AS multiple_image,
       raw, raw_hash, c.run_id AS last_seen_run, c.observed_at AS last_seen_at, NULL::TIMESTAMPTZ AS deleted_upstream_at,
       seq AS x_seq, page AS x_page, idx AS x_idx, variants AS x_product_variants,
       list_filter([
           CASE WHEN r IS NULL THEN 'not a JSON object' END,
           CASE WHEN r IS NOT NULL AND bs_blank(r.id) IS NULL THEN 'id: missing' END,
           bs_path_id(bs_blank(r.id)),
           bs_bad('amount', r.amount, amount, 'an integer'),
           bs_bad('limit', r."limit", purchase_limit, 'an integer'),
           bs_bad('createdAt', r.createdAt, created_at, 'a timestamp'),
           bs_when('createdAt', r.createdAt, created_at, c.latest_at, c.clocks),
           CASE WHEN json_type(r.variant) = 'VARCHAR' AND variants IS NULL
                THEN 'variant: not a JSON-encoded array' END
       ], x -> x IS NOT NULL) AS x_problems
FROM t, merge_ctx c;
