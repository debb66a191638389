-- Customers whose credit history is due for a fetch, most useful first.
-- Parameters: 1 account, 2 refresh_before (TIMESTAMPTZ), 3 limit.
--
-- The API cannot say whose credit changed, so a customer is due when any of these holds, and the
-- tiers are fetched in this order (a run's budget may stop anywhere; the rest waits):
--   0 never fetched (the only way to learn it has none), most recently active first;
--   1 active since its last fetch (new invoice, unpaid transaction, review, ledger row, update);
--   2 holds credit: has ledger rows or is linked to a credit-usage product;
--   3 last fetched before refresh_before: the staleness bound that eventually catches credit
--     given without any other visible trace (a trial top-up, a merchant top-up).
-- Within tiers 1-3 the customer fetched longest ago goes first.
WITH acct AS (SELECT ?::VARCHAR AS account, ?::TIMESTAMPTZ AS refresh_before),
credit_products AS (
    SELECT p.id FROM products p, acct
    WHERE p.account = acct.account AND p.sub_type = 'credit_usage'
),
linked AS (
    SELECT i.customer_id FROM invoices i, acct
    WHERE i.account = acct.account
      AND (i.id IN (SELECT id FROM credit_products)
           OR (i.raw->>'$.extraData.idProd') IN (SELECT id FROM credit_products))
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
holders AS (
    SELECT customer_id FROM ledger UNION SELECT customer_id FROM linked
),
candidates AS (
    SELECT c.id AS customer_id FROM customers c, acct
    WHERE c.account = acct.account AND c.deleted_upstream_at IS NULL
    UNION SELECT customer_id FROM holders
),
tiered AS (
    SELECT c.customer_id, f.last_fetched_at, a.active_at,
           CASE
               WHEN f.last_fetched_at IS NULL THEN 0
               WHEN a.active_at > f.last_fetched_at THEN 1
               WHEN c.customer_id IN (SELECT customer_id FROM holders) THEN 2
               WHEN f.last_fetched_at < (SELECT refresh_before FROM acct) THEN 3
           END AS tier
    FROM candidates c
    LEFT JOIN fetched f USING (customer_id)
    LEFT JOIN last_active a USING (customer_id)
    WHERE c.customer_id IS NOT NULL AND c.customer_id <> ''
)
SELECT customer_id, last_fetched_at, active_at AS last_active_at
FROM tiered
WHERE tier IS NOT NULL
ORDER BY tier,
         CASE WHEN tier = 0 THEN active_at END DESC NULLS LAST,
         last_fetched_at ASC,
         customer_id
LIMIT ?;
