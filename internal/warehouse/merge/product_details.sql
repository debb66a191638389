-- Product detail (GET /hl/v1/product/{id}, the `data` object). Fills user_id,
-- qty, detail_fetched_at and the variants of products already listed; details
-- of products not (yet) in the products table are skipped.

-- name: project
CREATE OR REPLACE TEMP TABLE projected AS
WITH p AS (
    SELECT seq, page, idx, raw::JSON AS raw, json_transform(raw, '{
        "id": "VARCHAR", "userId": "VARCHAR", "qty": "VARCHAR", "variants": "JSON", "variant": "JSON"}') AS r
    FROM parse_input
), t AS (
    SELECT *, bs_int(r.qty) AS qty, bs_variants(r.variants, r.variant, raw) AS variants FROM p
)
SELECT c.account, bs_blank(r.id) AS id, r.userId AS user_id, qty, c.observed_at AS detail_fetched_at,
       c.run_id AS last_seen_run, c.observed_at AS last_seen_at,
       seq AS x_seq, page AS x_page, idx AS x_idx, variants AS x_product_variants,
       list_filter([
           CASE WHEN r IS NULL THEN 'not a JSON object' END,
           CASE WHEN r IS NOT NULL AND bs_blank(r.id) IS NULL THEN 'id: missing' END,
           bs_bad('qty', r.qty, qty, 'an integer'),
           CASE WHEN json_type(r.variant) = 'VARCHAR' AND variants IS NULL
                THEN 'variant: not a JSON-encoded array' END
       ], x -> x IS NOT NULL) AS x_problems
FROM t, merge_ctx c;

-- name: classify
-- A detail is compared with the listed row's detail columns, not its raw list record.
CREATE OR REPLACE TEMP TABLE merge_state AS
SELECT s.id,
       CASE WHEN t.user_id IS DISTINCT FROM s.user_id OR t.qty IS DISTINCT FROM s.qty THEN 'changed'
            ELSE 'same' END AS state,
       false AS was_deleted,
       true AS derive -- a detail always says which variants exist
FROM incoming s JOIN products t ON t.account = s.account AND t.id = s.id;

-- name: counts
SELECT 0 AS inserted, count(*) FILTER (WHERE state = 'changed') AS updated,
       count(*) FILTER (WHERE state = 'same') AS unchanged, 0 AS restored
FROM merge_state;

-- name: lifecycle
-- opt-out: a detail fills columns of listed rows: it creates, deletes and restores none

-- name: changes
-- opt-out: owner and quantity changes are not tracked in record_changes

-- name: upsert
-- Only existing products; the detail does not move last_seen (that is the list's job).
MERGE INTO products t
USING (SELECT account, id, user_id, qty, detail_fetched_at FROM incoming) s
ON t.account = s.account AND t.id = s.id
WHEN MATCHED THEN UPDATE BY NAME;

