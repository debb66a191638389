-- Customers whose e-mail is malformed or shared with another customer (ignoring
-- case and surrounding spaces). The first two columns are the input of the
-- `email-fix` job: fill toEmail, keep or drop the other columns.
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
           lower(regexp_replace(coalesce(email, ''), '\s', '', 'g')) AS cleaned
    FROM current_customers
)
SELECT email AS "fromEmail",
       '' AS "toEmail",
       id AS customer_id, name AS customer_name, account,
       concat_ws('; ',
           CASE WHEN email IS NULL OR trim(email) = '' THEN 'empty'
                WHEN malformed THEN 'malformed' END,
           CASE WHEN email_key <> '' AND sharing > 1 THEN 'shared with ' || (sharing - 1) || ' other customer(s)' END,
           CASE WHEN exact_sharing > 1 THEN 'fromEmail is ambiguous: ' || exact_sharing || ' customers have exactly this e-mail' END
       ) AS problem,
       CASE WHEN malformed AND regexp_full_match(cleaned, '[^@\s]+@[^@\s]+\.[a-z]{2,}') THEN cleaned END AS suggestion,
       mobile, created_at, updated_at
FROM checked
WHERE malformed OR (email_key <> '' AND sharing > 1)
ORDER BY account, email_key, created_at, id;
