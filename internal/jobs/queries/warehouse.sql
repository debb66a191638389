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

-- The service's own records that show a change a job row makes (traces.go): each takes the account, the
-- start of the repeat window and a JSON array of keys, and returns key, id, time and four texts the kind
-- compares. Deleted or closed records count: they still show the change was made.

-- name: topup_traces
-- Credit entries of the customers (?3) created in the window: product, credit, debit, type.
SELECT customer_id, id, created_at, coalesce(product_id, ''), coalesce(credit::VARCHAR, ''), coalesce(debit::VARCHAR, ''),
       coalesce(type, '')
FROM credit_ledger
WHERE account = ?1 AND created_at >= ?2
  AND customer_id IN (SELECT unnest(json_transform(?3::JSON, '["VARCHAR"]')))
ORDER BY created_at, id;

-- name: invoice_traces
-- Invoices to the e-mails (?3, any case) created in the window: name, description, amount.
SELECT lower(customer_email), id, created_at, coalesce(name, ''), coalesce(description, ''), coalesce(amount::VARCHAR, ''), ''
FROM invoices
WHERE account = ?1 AND created_at >= ?2
  AND lower(customer_email) IN (SELECT lower(unnest(json_transform(?3::JSON, '["VARCHAR"]'))))
ORDER BY created_at, id;

-- name: email_traces
-- Customers' e-mail changes away from the addresses (?3, any case) a sync saw in the window: the new address.
SELECT lower(old_value), record_id, observed_at, coalesce(new_value, ''), '', '', ''
FROM record_changes
WHERE account = ?1 AND entity = 'customers' AND field = 'email' AND observed_at >= ?2
  AND lower(old_value) IN (SELECT lower(unnest(json_transform(?3::JSON, '["VARCHAR"]'))))
ORDER BY observed_at, record_id;

-- name: payment_edit_traces
-- Changes of a tracked field (name, amount) of the payment requests (?3) a sync saw in the window: the
-- field, its new value, and the request's name and amount as last synced.
SELECT c.record_id, c.record_id, c.observed_at, c.field, coalesce(c.new_value, ''), coalesce(p.name, ''),
       coalesce(p.amount::VARCHAR, '')
FROM record_changes c
JOIN payment_requests p ON p.account = c.account AND p.id = c.record_id
WHERE c.account = ?1 AND c.entity = 'payment_requests' AND c.field IN ('name', 'amount') AND c.observed_at >= ?2
  AND c.record_id IN (SELECT unnest(json_transform(?3::JSON, '["VARCHAR"]')))
ORDER BY c.observed_at, c.field;
