-- An account's credit targets before any credit read of it is recorded (its first sync):
-- credit_targets.sql then gives every customer the reason `never` (each other reason needs an
-- earlier read, and with none the levelling has no gap between runs to spread reads over), newest
-- first. This gives the same rows without the signals, which read every invoice's raw JSON and
-- every webhook's event: 1.7 of a first sync's CPU-seconds at simulator scale 100.

-- name: any_read
SELECT EXISTS (SELECT 1 FROM credit_fetch_state WHERE account = $1);

-- name: never
-- Parameters: 1 account, 2 limit. The candidates and the order are credit_targets.sql's.
WITH candidates AS (
    SELECT c.id AS customer_id, greatest(c.created_at, c.updated_at) AS active_at FROM customers c
    WHERE c.account = $1 AND c.deleted_upstream_at IS NULL
    UNION
    SELECT l.customer_id, NULL FROM credit_ledger l WHERE l.account = $1
)
SELECT customer_id, NULL::TIMESTAMPTZ AS last_fetched_at, 'never' AS reason
FROM candidates
WHERE customer_id IS NOT NULL AND customer_id <> ''
GROUP BY customer_id
ORDER BY max(active_at) DESC NULLS LAST, customer_id
LIMIT $2;
