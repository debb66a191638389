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
