-- Names two or more customers (or products) carry: on a printed sheet, where the ID columns are
-- out of print, such a name gets the start of its ID (samenames.go). A name counts as shared
-- when the customer list, the invoices, the unpaid transactions or the reviews name two
-- customers with it (products: the product list and the reviews, whose product is a payment
-- link), ignoring case and runs of spaces, as a reader would; within the chosen account when
-- there is one. Every (kind, name, account, id) of such a name is a row.
WITH named(kind, account, id, name) AS (
    SELECT 'customer', account, id, name FROM customers
    UNION SELECT 'customer', account, customer_id, customer_name FROM invoices
    UNION SELECT 'customer', account, customer_id, customer_name FROM unpaid_transactions
    UNION SELECT 'customer', account, customer_id, customer_name FROM reviews
    UNION SELECT 'product', account, id, name FROM products
    UNION SELECT 'product', account, payment_link_id, product_name FROM reviews
),
keyed AS (
    SELECT kind, account, id, name, lower(regexp_replace(trim(name), '\s+', ' ', 'g')) AS name_key
    FROM named
    WHERE id IS NOT NULL AND trim(name) <> ''
      AND (getvariable('account') IS NULL OR account = getvariable('account'))
)
SELECT kind, name_key, name, account, id
FROM keyed
QUALIFY count(DISTINCT (account, id)) OVER (PARTITION BY kind, name_key) > 1
ORDER BY kind, name_key, account, id, name;
