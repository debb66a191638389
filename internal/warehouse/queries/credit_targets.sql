-- Customers whose credit history is worth fetching, most useful first.
-- Parameters: 1 account, 2 limit.
-- A customer is a candidate when it has ledger rows, when it is linked to a
-- credit-usage product (through an invoice, an unpaid transaction or a review),
-- or when its history was never fetched (the only way to learn it has none).
-- Never-fetched customers come first, most recently active first; then the
-- rest, the one fetched longest ago first.
WITH acct AS (SELECT ?::VARCHAR AS account),
credit_products AS (
    SELECT p.id FROM products p, acct
    WHERE p.account = acct.account AND p.sub_type = 'credit_usage'
),
linked AS (
    SELECT i.customer_id FROM invoices i, acct
    WHERE i.account = acct.account
      AND (i.id IN (SELECT id FROM credit_products)
           OR i.raw->>'$.extraData.idProd' IN (SELECT id FROM credit_products))
    UNION
    SELECT u.customer_id FROM unpaid_transactions u, acct
    WHERE u.account = acct.account AND u.payment_link_id IN (SELECT id FROM credit_products)
    UNION
    SELECT r.customer_id FROM reviews r, acct
    WHERE r.account = acct.account AND r.payment_link_id IN (SELECT id FROM credit_products)
),
ledger AS (
    SELECT l.customer_id FROM credit_ledger l, acct WHERE l.account = acct.account
),
activity AS (
    SELECT id AS customer_id, greatest(created_at, updated_at) AS active_at
    FROM customers, acct WHERE customers.account = acct.account
    UNION ALL
    SELECT customer_id, created_at FROM invoices, acct WHERE invoices.account = acct.account
    UNION ALL
    SELECT customer_id, created_at FROM unpaid_transactions, acct WHERE unpaid_transactions.account = acct.account
    UNION ALL
    SELECT customer_id, greatest(created_at, updated_at) FROM reviews, acct WHERE reviews.account = acct.account
    UNION ALL
    SELECT customer_id, created_at FROM credit_ledger, acct WHERE credit_ledger.account = acct.account
),
last_active AS (
    SELECT customer_id, max(active_at) AS active_at FROM activity WHERE customer_id IS NOT NULL GROUP BY customer_id
),
fetched AS (
    SELECT f.customer_id, f.last_fetched_at FROM credit_fetch_state f, acct WHERE f.account = acct.account
),
candidates AS (
    SELECT customer_id FROM ledger
    UNION SELECT customer_id FROM linked
    UNION SELECT a.customer_id FROM last_active a WHERE a.customer_id NOT IN (SELECT customer_id FROM fetched)
)
SELECT c.customer_id, f.last_fetched_at, a.active_at AS last_active_at
FROM candidates c
LEFT JOIN fetched f USING (customer_id)
LEFT JOIN last_active a USING (customer_id)
WHERE c.customer_id IS NOT NULL AND c.customer_id <> ''
ORDER BY f.last_fetched_at IS NOT NULL,
         CASE WHEN f.last_fetched_at IS NULL THEN a.active_at END DESC NULLS LAST,
         f.last_fetched_at ASC,
         c.customer_id
LIMIT ?;
