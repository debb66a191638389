-- Look-ups in the published warehouse (opened read-only) that planning validates against.
-- Every query takes the account and a JSON array of keys; nothing is built from input text.

-- name: customers_by_email
SELECT id, coalesce(email, ''), coalesce(name, ''), coalesce(mobile, '')
FROM customers
WHERE account = ? AND deleted_upstream_at IS NULL
  AND lower(email) IN (SELECT lower(unnest(json_transform(?::JSON, '["VARCHAR"]'))))
ORDER BY id;

-- name: customers_by_id
SELECT id, coalesce(email, ''), coalesce(name, ''), coalesce(mobile, '')
FROM customers
WHERE account = ? AND deleted_upstream_at IS NULL
  AND id IN (SELECT unnest(json_transform(?::JSON, '["VARCHAR"]')));

-- name: products_by_id
SELECT id, coalesce(name, ''), coalesce(type, ''), coalesce(sub_type, ''), coalesce(status, '')
FROM products
WHERE account = ? AND deleted_upstream_at IS NULL
  AND id IN (SELECT unnest(json_transform(?::JSON, '["VARCHAR"]')));

-- name: balances
-- Balances of the customers named by id (?2) or by e-mail (?3).
SELECT customer_id, product_id, (sum(credit) - sum(debit))::VARCHAR
FROM credit_ledger
WHERE account = ?1
  AND (customer_id IN (SELECT unnest(json_transform(?2::JSON, '["VARCHAR"]')))
       OR customer_id IN (SELECT id FROM customers WHERE account = ?1
                          AND lower(email) IN (SELECT lower(unnest(json_transform(?3::JSON, '["VARCHAR"]'))))))
GROUP BY ALL;

-- name: payment_requests_by_id
SELECT id, coalesce(name, ''), coalesce(amount::VARCHAR, ''), coalesce(description, ''), coalesce(status, ''),
       coalesce(redirect_url, '')
FROM payment_requests
WHERE account = ? AND deleted_upstream_at IS NULL
  AND id IN (SELECT unnest(json_transform(?::JSON, '["VARCHAR"]')));

-- name: payment_links_by_id
-- A coupon is validated against a payment link: a product, a payment request or an invoice.
SELECT id, 'product', coalesce(name, ''), coalesce(amount::VARCHAR, '') FROM products
WHERE account = ?1 AND deleted_upstream_at IS NULL AND id IN (SELECT unnest(json_transform(?2::JSON, '["VARCHAR"]')))
UNION ALL
SELECT id, 'payment request', coalesce(name, ''), coalesce(amount::VARCHAR, '') FROM payment_requests
WHERE account = ?1 AND deleted_upstream_at IS NULL AND id IN (SELECT unnest(json_transform(?2::JSON, '["VARCHAR"]')))
UNION ALL
SELECT id, 'invoice', coalesce(name, ''), coalesce(amount::VARCHAR, '') FROM invoices
WHERE account = ?1 AND deleted_upstream_at IS NULL AND id IN (SELECT unnest(json_transform(?2::JSON, '["VARCHAR"]')));

-- name: last_sync
SELECT max(finished_at) FROM sync_runs WHERE account = ? AND status IN ('succeeded', 'partial');

-- name: credit_products
-- The credit-usage products a credit top-up can name, with each one's customers holding a balance.
SELECT p.id, coalesce(p.name, ''), coalesce(p.type, ''), coalesce(p.status, ''),
       (SELECT count(DISTINCT l.customer_id) FROM credit_ledger l WHERE l.account = p.account AND l.product_id = p.id)
FROM products p
WHERE p.account = ? AND p.deleted_upstream_at IS NULL AND p.sub_type = 'credit_usage'
ORDER BY p.status = 'active' DESC, lower(p.name), p.id;
