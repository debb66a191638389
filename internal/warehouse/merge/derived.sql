-- Tables derived from arrays inside a parent record, run after the parent's
-- upsert inside the same transaction. A parent that says which children it has
-- is authoritative: children it no longer lists get deleted_upstream_at.
-- Only parents that are new, changed or restored are looked at (merge_state):
-- an unchanged parent has unchanged children, so their seen columns move only
-- when the parent's record changes.
--
-- Each child table has three sections: <name>_incoming builds incoming_<x>
-- from the parents' arrays (parsed once, in the parent's project), <name>
-- merges it, and <name>_first inserts it when the parent had its first load.

-- name: product_variants_incoming
CREATE OR REPLACE TEMP TABLE incoming_variants AS
WITH v AS (
    SELECT s.account, s.id AS product_id, s.last_seen_run, s.last_seen_at,
           unnest(s.x_variants::JSON[]) AS raw
    FROM incoming s
    WHERE s.x_variants IS NOT NULL
      AND s.id IN (SELECT id FROM merge_state WHERE derive)
      AND EXISTS (SELECT 1 FROM products p WHERE p.account = s.account AND p.id = s.id)
), p AS (
    SELECT *, json_transform(raw, '{
        "id": "VARCHAR", "name": "VARCHAR", "description": "VARCHAR", "amount": "VARCHAR", "limit": "VARCHAR",
        "notes": "VARCHAR", "redirectUrl": "VARCHAR", "status": "VARCHAR", "createdAt": "VARCHAR"}') AS r
    FROM v
)
SELECT account, product_id, bs_blank(r.id) AS id, r.name AS name, r.description AS description,
       bs_int(r.amount) AS amount, bs_int(r."limit") AS purchase_limit, r.notes AS notes,
       r.redirectUrl AS redirect_url, r.status AS status, bs_ts(r.createdAt) AS created_at,
       raw, last_seen_run, last_seen_at, NULL::TIMESTAMPTZ AS deleted_upstream_at,
       last_seen_run AS first_seen_run, last_seen_at AS first_seen_at
FROM p
WHERE bs_blank(r.id) IS NOT NULL
QUALIFY row_number() OVER (PARTITION BY product_id, bs_blank(r.id)) = 1;

-- name: product_variants
INSERT INTO record_changes
SELECT s.account, 'product_variants', s.id, u.ch.field, u.ch.old_value, u.ch.new_value, s.last_seen_at, s.last_seen_run
FROM incoming_variants s
JOIN product_variants t ON t.account = s.account AND t.product_id = s.product_id AND t.id = s.id,
LATERAL UNNEST([
    {'field': 'status', 'old_value': t.status, 'new_value': s.status},
    {'field': 'amount', 'old_value': t.amount::VARCHAR, 'new_value': s.amount::VARCHAR},
    {'field': 'name', 'old_value': t.name, 'new_value': s.name}
]) AS u(ch)
WHERE u.ch.old_value IS DISTINCT FROM u.ch.new_value;

INSERT INTO record_changes
SELECT s.account, 'product_variants', s.id, CASE WHEN t.id IS NULL THEN '_created' ELSE '_restored' END,
       NULL, NULL, s.last_seen_at, s.last_seen_run
FROM incoming_variants s
LEFT JOIN product_variants t ON t.account = s.account AND t.product_id = s.product_id AND t.id = s.id
WHERE t.deleted_upstream_at IS NOT NULL
   OR (t.id IS NULL AND EXISTS (SELECT 1 FROM products p, merge_ctx c
                               WHERE p.account = c.account AND p.first_seen_run <> c.run_id));

INSERT INTO record_changes
SELECT t.account, 'product_variants', t.id, '_deleted', NULL, NULL, c.observed_at, c.run_id
FROM product_variants t, merge_ctx c
WHERE t.account = c.account AND t.deleted_upstream_at IS NULL
  AND t.product_id IN (SELECT id FROM incoming WHERE x_variants IS NOT NULL
                       AND id IN (SELECT id FROM merge_state WHERE derive))
  AND NOT EXISTS (SELECT 1 FROM incoming_variants s WHERE s.product_id = t.product_id AND s.id = t.id);

UPDATE product_variants t SET deleted_upstream_at = c.observed_at
FROM merge_ctx c
WHERE t.account = c.account AND t.deleted_upstream_at IS NULL
  AND t.product_id IN (SELECT id FROM incoming WHERE x_variants IS NOT NULL
                       AND id IN (SELECT id FROM merge_state WHERE derive))
  AND NOT EXISTS (SELECT 1 FROM incoming_variants s WHERE s.product_id = t.product_id AND s.id = t.id);

MERGE INTO product_variants t
USING incoming_variants s
ON t.account = s.account AND t.product_id = s.product_id AND t.id = s.id
WHEN MATCHED THEN UPDATE SET name = s.name, description = s.description, amount = s.amount, purchase_limit = s.purchase_limit, notes = s.notes, redirect_url = s.redirect_url, status = s.status, created_at = s.created_at, raw = s.raw, last_seen_run = s.last_seen_run, last_seen_at = s.last_seen_at, deleted_upstream_at = NULL
WHEN NOT MATCHED THEN INSERT BY NAME;

-- name: product_variants_first
INSERT INTO product_variants BY NAME SELECT * FROM incoming_variants;

-- name: invoice_transactions_incoming
CREATE OR REPLACE TEMP TABLE incoming_transactions AS
WITH v AS (
    SELECT account, id AS invoice_id, last_seen_run, last_seen_at, unnest(x_transactions::JSON[]) AS raw
    FROM incoming
    WHERE x_transactions IS NOT NULL
      AND id IN (SELECT id FROM merge_state WHERE derive)
), p AS (
    SELECT *, json_transform(raw, '{"id": "VARCHAR", "status": "VARCHAR"}') AS r FROM v
)
SELECT account, invoice_id, bs_blank(r.id) AS id, r.status AS status,
       raw, last_seen_run, last_seen_at, NULL::TIMESTAMPTZ AS deleted_upstream_at,
       last_seen_run AS first_seen_run, last_seen_at AS first_seen_at
FROM p
WHERE bs_blank(r.id) IS NOT NULL
QUALIFY row_number() OVER (PARTITION BY invoice_id, bs_blank(r.id)) = 1;

-- name: invoice_transactions
INSERT INTO record_changes
SELECT s.account, 'invoice_transactions', s.id, 'status', t.status, s.status, s.last_seen_at, s.last_seen_run
FROM incoming_transactions s
JOIN invoice_transactions t ON t.account = s.account AND t.invoice_id = s.invoice_id AND t.id = s.id
WHERE t.status IS DISTINCT FROM s.status;

INSERT INTO record_changes
SELECT s.account, 'invoice_transactions', s.id, CASE WHEN t.id IS NULL THEN '_created' ELSE '_restored' END,
       NULL, NULL, s.last_seen_at, s.last_seen_run
FROM incoming_transactions s
LEFT JOIN invoice_transactions t ON t.account = s.account AND t.invoice_id = s.invoice_id AND t.id = s.id
WHERE t.deleted_upstream_at IS NOT NULL
   OR (t.id IS NULL AND EXISTS (SELECT 1 FROM invoices p, merge_ctx c
                               WHERE p.account = c.account AND p.first_seen_run <> c.run_id));

INSERT INTO record_changes
SELECT t.account, 'invoice_transactions', t.id, '_deleted', NULL, NULL, c.observed_at, c.run_id
FROM invoice_transactions t, merge_ctx c
WHERE t.account = c.account AND t.deleted_upstream_at IS NULL
  AND t.invoice_id IN (SELECT id FROM incoming WHERE x_transactions IS NOT NULL
                       AND id IN (SELECT id FROM merge_state WHERE derive))
  AND NOT EXISTS (SELECT 1 FROM incoming_transactions s WHERE s.invoice_id = t.invoice_id AND s.id = t.id);

UPDATE invoice_transactions t SET deleted_upstream_at = c.observed_at
FROM merge_ctx c
WHERE t.account = c.account AND t.deleted_upstream_at IS NULL
  AND t.invoice_id IN (SELECT id FROM incoming WHERE x_transactions IS NOT NULL
                       AND id IN (SELECT id FROM merge_state WHERE derive))
  AND NOT EXISTS (SELECT 1 FROM incoming_transactions s WHERE s.invoice_id = t.invoice_id AND s.id = t.id);

MERGE INTO invoice_transactions t
USING incoming_transactions s
ON t.account = s.account AND t.invoice_id = s.invoice_id AND t.id = s.id
WHEN MATCHED THEN UPDATE SET status = s.status, raw = s.raw, last_seen_run = s.last_seen_run, last_seen_at = s.last_seen_at, deleted_upstream_at = NULL
WHEN NOT MATCHED THEN INSERT BY NAME;

-- name: invoice_transactions_first
INSERT INTO invoice_transactions BY NAME SELECT * FROM incoming_transactions;
