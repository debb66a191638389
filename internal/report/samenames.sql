-- Names two or more customers (or products) carry: on a printed sheet, where the ID columns are
-- out of print, such a name gets the start of its ID (samenames.go). A name counts as shared
-- when the customer list, the invoices, the unpaid transactions or the reviews name two
-- customers with it (products: the product list and the reviews, whose product is a payment
-- link), names that look alike counting as one, as a reader would take them; within the chosen account when
-- there is one. A row for every way a shared name is written, with how many characters of an
-- ID tell that name's IDs apart. Only names are returned, not IDs: a merchant whose customers share a few hundred
-- names between them all costs a few hundred rows, not one per customer.
WITH named(kind, account, id, name) AS (
    SELECT 'customer', account, id, name FROM customers
    UNION SELECT 'customer', account, customer_id, customer_name FROM invoices
    UNION SELECT 'customer', account, customer_id, customer_name FROM unpaid_transactions
    UNION SELECT 'customer', account, customer_id, customer_name FROM reviews
    UNION SELECT 'product', account, id, name FROM products
    UNION SELECT 'product', account, payment_link_id, product_name FROM reviews
),
chosen AS (
    SELECT kind, account, id, name FROM named
    WHERE id IS NOT NULL AND name IS NOT NULL
      AND (getvariable('account') IS NULL OR account = getvariable('account'))
),
-- each way a name is written, keyed once rather than once per record; the key is the name
-- as a reader sees it (billsync_name_key, registered by billsync: namekey.go): invisible
-- characters left out, right-to-left overrides in drawn order, compatibility forms and letters
-- of other scripts drawn like Latin ones folded, case and runs of spaces ignored
written AS (
    SELECT kind, name, name_key
    FROM (SELECT kind, name, billsync_name_key(name) AS name_key FROM (SELECT DISTINCT kind, name FROM chosen))
    WHERE name_key <> ''
),
-- a name's IDs, and how much of their start tells them apart: 8 characters, else 12, 16 or all
ids AS (
    SELECT DISTINCT c.kind, w.name_key, c.account, c.id
    FROM chosen c JOIN written w ON w.kind = c.kind AND w.name = c.name
),
shared AS (
    SELECT kind, name_key,
           CASE count(*)
               WHEN count(DISTINCT left(id, 8)) THEN 8
               WHEN count(DISTINCT left(id, 12)) THEN 12
               WHEN count(DISTINCT left(id, 16)) THEN 16
               ELSE max(length(id)) END AS id_chars
    FROM ids
    GROUP BY kind, name_key
    HAVING count(*) > 1
)
SELECT w.kind, w.name, s.id_chars
FROM written w JOIN shared s ON s.kind = w.kind AND s.name_key = w.name_key
ORDER BY w.kind, w.name_key, w.name;
