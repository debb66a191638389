-- Conveniences for the questions analysts ask most, stored in the warehouse so every DuckDB
-- client (and `report -sql`) has them. Documented with examples in docs/warehouse.md.

-- open_items(as_of[, tz]): what customers owed at the end of the day as_of (local day in tz):
-- every unpaid transaction, plus open invoices and unpaid/active payment requests that never
-- appeared in the unpaid list, with status and amount as billsync observed them at that time.
-- The same rules as the aging report (queries/aging_detail.sql): a past date is answered from
-- record_changes, and before the first sync billsync knows nothing of records already gone.
CREATE OR REPLACE MACRO open_items(as_of, tz := 'Asia/Jakarta') AS TABLE
WITH p AS (SELECT timezone(tz, (as_of::DATE + 1)::TIMESTAMP) AS cutoff),
h AS (
    SELECT c.account, c.entity, c.record_id,
           arg_max({v: c.new_value}, c.observed_at) FILTER (c.field = 'status' AND c.observed_at <= p.cutoff) AS status_before,
           arg_min({v: c.old_value}, c.observed_at) FILTER (c.field = 'status' AND c.observed_at > p.cutoff) AS status_after,
           arg_max({v: c.new_value}, c.observed_at) FILTER (c.field = 'amount' AND c.observed_at <= p.cutoff) AS amount_before,
           arg_min({v: c.old_value}, c.observed_at) FILTER (c.field = 'amount' AND c.observed_at > p.cutoff) AS amount_after,
           arg_max(c.field, c.observed_at) FILTER (c.field IN ('_created', '_deleted', '_restored') AND c.observed_at <= p.cutoff) AS lifecycle
    FROM record_changes c, p
    WHERE c.entity IN ('unpaid_transactions', 'invoices', 'payment_requests')
      AND c.field IN ('status', 'amount', '_created', '_deleted', '_restored')
    GROUP BY ALL
),
items AS (
    SELECT u.account, 'unpaid transaction' AS source, u.id, u.payment_link_id, u.payment_link_name AS name,
           u.customer_id, u.customer_name, u.customer_email, u.created_at, u.expired_at,
           CASE WHEN h.amount_before IS NOT NULL THEN TRY_CAST(h.amount_before.v AS BIGINT)
                WHEN h.amount_after IS NOT NULL THEN TRY_CAST(h.amount_after.v AS BIGINT) ELSE u.amount END AS amount,
           u.payment_url, h.lifecycle, 'unpaid' AS status_then
    FROM unpaid_transactions u
    LEFT JOIN h ON h.entity = 'unpaid_transactions' AND h.account = u.account AND h.record_id = u.id
    UNION ALL
    SELECT i.account, 'invoice', i.id, i.id, i.name, i.customer_id, i.customer_name, i.customer_email, i.created_at, i.expired_at,
           CASE WHEN h.amount_before IS NOT NULL THEN TRY_CAST(h.amount_before.v AS BIGINT)
                WHEN h.amount_after IS NOT NULL THEN TRY_CAST(h.amount_after.v AS BIGINT) ELSE i.amount END,
           NULL, h.lifecycle,
           CASE WHEN h.status_before IS NOT NULL THEN h.status_before.v
                WHEN h.status_after IS NOT NULL THEN h.status_after.v ELSE i.status END
    FROM invoices i
    LEFT JOIN h ON h.entity = 'invoices' AND h.account = i.account AND h.record_id = i.id
    WHERE NOT EXISTS (SELECT 1 FROM unpaid_transactions u WHERE u.account = i.account AND u.payment_link_id = i.id)
    UNION ALL
    SELECT r.account, 'payment request', r.id, r.id, r.name, NULL, r.name, NULL, r.created_at, r.expired_at,
           CASE WHEN h.amount_before IS NOT NULL THEN TRY_CAST(h.amount_before.v AS BIGINT)
                WHEN h.amount_after IS NOT NULL THEN TRY_CAST(h.amount_after.v AS BIGINT) ELSE r.amount END,
           NULL, h.lifecycle,
           CASE WHEN h.status_before IS NOT NULL THEN h.status_before.v
                WHEN h.status_after IS NOT NULL THEN h.status_after.v ELSE r.status END
    FROM payment_requests r
    LEFT JOIN h ON h.entity = 'payment_requests' AND h.account = r.account AND h.record_id = r.id
    WHERE NOT EXISTS (SELECT 1 FROM unpaid_transactions u WHERE u.account = r.account AND u.payment_link_id = r.id)
)
SELECT account, source, id, payment_link_id, name, customer_id, customer_name, customer_email,
       created_at, expired_at, amount, payment_url
FROM items, p
WHERE created_at < p.cutoff AND lifecycle IS DISTINCT FROM '_deleted'
  AND (source = 'unpaid transaction' OR source = 'invoice' AND status_then = 'active'
       OR source = 'payment request' AND status_then IN ('unpaid', 'active'));

-- customer_balance(customer): a customer's credit balance per product and wallet, by customer
-- id or e-mail (ignoring case), from the credit history billsync has read.
CREATE OR REPLACE MACRO customer_balance(customer) AS TABLE
SELECT l.account, l.customer_id, any_value(c.email) AS email, l.product_id, any_value(p.name) AS product_name,
       l.wallet_type, sum(l.credit) - sum(l.debit) AS balance, count(*) AS entries, max(l.created_at) AS last_movement
FROM credit_ledger l
LEFT JOIN customers c ON c.account = l.account AND c.id = l.customer_id
LEFT JOIN products p ON p.account = l.account AND p.id = l.product_id
WHERE l.customer_id = customer OR lower(trim(c.email)) = lower(trim(customer))
GROUP BY l.account, l.customer_id, l.product_id, l.wallet_type
ORDER BY l.account, product_name, l.wallet_type;

-- monthly_collections: per account and month of creation (Asia/Jakarta), invoices and payment
-- requests issued and paid as they stand now. The collections report answers the same for a
-- past date and adds days to pay.
CREATE OR REPLACE VIEW monthly_collections AS
SELECT account, date_trunc('month', timezone('Asia/Jakarta', created_at))::DATE AS month,
       count(*) AS issued, sum(amount) AS issued_amount,
       count(*) FILTER (status = 'paid') AS paid, sum(amount) FILTER (status = 'paid') AS paid_amount,
       round(coalesce(sum(amount) FILTER (status = 'paid'), 0) / nullif(sum(amount), 0), 4) AS collected_share,
       count(*) FILTER (status IN ('active', 'unpaid')) AS still_open
FROM (SELECT account, created_at, amount, status FROM invoices WHERE deleted_upstream_at IS NULL
      UNION ALL
      SELECT account, created_at, amount, status FROM payment_requests WHERE deleted_upstream_at IS NULL)
GROUP BY ALL
ORDER BY account, month;
