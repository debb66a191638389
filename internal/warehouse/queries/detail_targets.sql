-- Records listed but never read through their detail endpoint, newest first.
-- Parameters: 1 account, 2 limit. Records gone upstream are not worth a request.

-- name: products
SELECT id FROM products
WHERE account = ? AND detail_fetched_at IS NULL AND deleted_upstream_at IS NULL
ORDER BY created_at DESC, id
LIMIT ?;

-- name: payment_requests
SELECT id FROM payment_requests
WHERE account = ? AND detail_fetched_at IS NULL AND deleted_upstream_at IS NULL
ORDER BY created_at DESC, id
LIMIT ?;
