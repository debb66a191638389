-- Customers whose e-mail is malformed or shared with another customer (ignoring
-- case and surrounding spaces). The sheet is the input of the `email-fix` job as
-- it stands: toEmail is filled with the corrected address where one is safe (a
-- malformed address whose cleaned form is valid, used by no other customer, for a
-- fromEmail only this customer has); fill or change the others, leave toEmail
-- blank to leave a customer alone. Other columns are context the job ignores.
-- problem codes: empty, malformed, shared (another customer has it, ignoring case),
-- ambiguous (another customer has exactly this fromEmail, so the job cannot tell them apart).
--
-- Parameters (SET VARIABLE name = value; before running this file to change one):
--   account  VARCHAR  only this billsync account; NULL = all   default NULL
--
-- Current customers only (deleted upstream ones are left out): a fix applies to
-- the e-mail as it is now, so this sheet has no as-of date.
WITH params AS (
    SELECT getvariable('account')::VARCHAR AS account
),
-- Only the keys of every current customer; the listed ones' other columns are read at the end
-- (by rowid), so the keys of 200k customers are all that is held.
current_customers AS (
    SELECT c.rowid AS row_id, c.account, c.id, c.email, lower(trim(c.email)) AS email_key,
           lower(regexp_replace(coalesce(c.email, ''), '\s', '', 'g')) AS cleaned
    FROM customers c, params p
    WHERE c.deleted_upstream_at IS NULL AND (p.account IS NULL OR c.account = p.account)
),
-- How many customers share a key is counted by grouping and joining back, not by window (a
-- window over 200k partitions of about one customer each cost a second); IS NOT DISTINCT FROM
-- groups NULLs together as a window's partition does.
by_key AS (
    SELECT k.account, k.email_key, count(*) AS n FROM current_customers k GROUP BY k.account, k.email_key
),
listed AS (
    SELECT c.*, k.n AS sharing,
           NOT coalesce(regexp_full_match(c.email, '[^@\s]+@[^@\s]+\.[A-Za-z]{2,}'), false) AS malformed
    FROM current_customers c
    JOIN by_key k ON k.account IS NOT DISTINCT FROM c.account AND k.email_key IS NOT DISTINCT FROM c.email_key
    WHERE NOT coalesce(regexp_full_match(c.email, '[^@\s]+@[^@\s]+\.[A-Za-z]{2,}'), false)
       OR (c.email_key <> '' AND k.n > 1)
),
-- the other counts, for the listed customers' e-mails only
by_email AS (
    SELECT c.account, c.email, count(*) AS n
    FROM current_customers c
    SEMI JOIN listed l ON l.account IS NOT DISTINCT FROM c.account AND l.email IS NOT DISTINCT FROM c.email
    GROUP BY c.account, c.email
),
by_cleaned AS (
    SELECT c.account, c.cleaned, count(*) AS n
    FROM current_customers c
    SEMI JOIN listed l ON l.account IS NOT DISTINCT FROM c.account AND l.cleaned IS NOT DISTINCT FROM c.cleaned
    GROUP BY c.account, c.cleaned
),
-- customers whose key is a listed customer's cleaned address, by id: min and max tell whether one
-- other than the listed customer is among them
cleaned_keys AS (
    SELECT c.account, c.email_key, count(c.id) AS ids, min(c.id) AS min_id, max(c.id) AS max_id
    FROM current_customers c
    SEMI JOIN listed l ON l.account = c.account AND l.cleaned = c.email_key
    GROUP BY c.account, c.email_key
),
suggested AS (
    SELECT l.*, e.n AS exact_sharing,
           CASE WHEN l.malformed AND regexp_full_match(l.cleaned, '[^@\s]+@[^@\s]+\.[a-z]{2,}') THEN l.cleaned END AS suggestion,
           -- a correction is proposed only where applying it cannot collide or pick the wrong
           -- customer: no other customer has the same address, the cleaned one, or the cleaned one
           -- as key (an id other than this customer's)
           e.n = 1 AND d.n = 1
             AND NOT coalesce(l.id IS NOT NULL AND o.ids > 0 AND (o.min_id <> l.id OR o.max_id <> l.id), false) AS safe
    FROM listed l
    JOIN by_email e ON e.account IS NOT DISTINCT FROM l.account AND e.email IS NOT DISTINCT FROM l.email
    JOIN by_cleaned d ON d.account IS NOT DISTINCT FROM l.account AND d.cleaned IS NOT DISTINCT FROM l.cleaned
    LEFT JOIN cleaned_keys o ON o.account = l.account AND o.email_key = l.cleaned
)
SELECT s.email AS "fromEmail",
       CASE WHEN s.safe THEN coalesce(s.suggestion, '') ELSE '' END AS "toEmail",
       s.id AS customer_id, c.name AS customer_name, s.account,
       -- codes, '; '-separated; the workbook and CSV show each in the report's language
       concat_ws('; ',
           CASE WHEN s.email IS NULL OR trim(s.email) = '' THEN 'empty'
                WHEN s.malformed THEN 'malformed' END,
           CASE WHEN s.email_key <> '' AND s.sharing > 1 THEN 'shared' END,
           CASE WHEN s.exact_sharing > 1 THEN 'ambiguous' END
       ) AS problem,
       -- other customers with this e-mail, ignoring case and surrounding spaces
       CASE WHEN s.email_key <> '' THEN s.sharing - 1 ELSE 0 END AS shared_with,
       s.suggestion,
       c.mobile, c.created_at, c.updated_at
FROM suggested s
JOIN customers c ON c.rowid = s.row_id
ORDER BY s.account, s.email_key, c.created_at, s.id;
