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
current_customers AS (
    SELECT c.*, lower(trim(c.email)) AS email_key
    FROM customers c, params p
    WHERE c.deleted_upstream_at IS NULL AND (p.account IS NULL OR c.account = p.account)
),
checked AS (
    SELECT *,
           count(*) OVER (PARTITION BY account, email_key) AS sharing,
           count(*) OVER (PARTITION BY account, email) AS exact_sharing,
           NOT coalesce(regexp_full_match(email, '[^@\s]+@[^@\s]+\.[A-Za-z]{2,}'), false) AS malformed,
           lower(regexp_replace(coalesce(email, ''), '\s', '', 'g')) AS cleaned,
           count(*) OVER (PARTITION BY account, lower(regexp_replace(coalesce(email, ''), '\s', '', 'g'))) AS cleaned_sharing
    FROM current_customers
),
suggested AS (
    SELECT k.*,
           CASE WHEN k.malformed AND regexp_full_match(k.cleaned, '[^@\s]+@[^@\s]+\.[a-z]{2,}') THEN k.cleaned END AS suggestion,
           -- a correction is proposed only where applying it cannot collide or pick the wrong customer
           k.exact_sharing = 1 AND k.cleaned_sharing = 1 AND NOT EXISTS (
               SELECT 1 FROM current_customers o
               WHERE o.account = k.account AND o.id <> k.id AND o.email_key = k.cleaned) AS safe
    FROM checked k
)
SELECT email AS "fromEmail",
       CASE WHEN safe THEN coalesce(suggestion, '') ELSE '' END AS "toEmail",
       id AS customer_id, name AS customer_name, account,
       -- codes, '; '-separated; the workbook and CSV show each in the report's language
       concat_ws('; ',
           CASE WHEN email IS NULL OR trim(email) = '' THEN 'empty'
                WHEN malformed THEN 'malformed' END,
           CASE WHEN email_key <> '' AND sharing > 1 THEN 'shared' END,
           CASE WHEN exact_sharing > 1 THEN 'ambiguous' END
       ) AS problem,
       -- other customers with this e-mail, ignoring case and surrounding spaces
       CASE WHEN email_key <> '' THEN sharing - 1 ELSE 0 END AS shared_with,
       suggestion,
       mobile, created_at, updated_at
FROM suggested
WHERE malformed OR (email_key <> '' AND sharing > 1)
ORDER BY account, email_key, created_at, id;
