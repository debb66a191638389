-- aging_items(as_of[, tz, account, basis, payment_terms_days, bucket_1, bucket_2, bucket_3]): every
-- item open at the end of the day as_of, as the aging report counts them: every unpaid
-- transaction, plus open invoices and unpaid payment requests that never appeared in the
-- unpaid-transaction list (so nothing counts twice), with amount and status as billsync observed
-- them at that cutoff. An item counts when it was created before the cutoff and its last
-- lifecycle change observed by then was not '_deleted' (one first seen later, still unpaid, was
-- unpaid at the cutoff too). Each gets its due date (basis 'due': expiry, else created +
-- payment_terms_days; 'created': the created date), days overdue at as_of and its bucket:
-- 0 current, 1 up to bucket_1 days overdue, ... 4 beyond bucket_3, with bucket_label.
-- Every branch reads the change history of its own entity once (changes_at): records without
-- changes, most of them, join nothing. (One aggregate over all three entities, joined three
-- times, held 25-35 MB more at 1M records.)
CREATE OR REPLACE MACRO aging_items(as_of, tz := report_zone(), account := NULL, basis := 'due',
                                    payment_terms_days := 14, bucket_1 := 30, bucket_2 := 60, bucket_3 := 90) AS TABLE
WITH p AS (
    SELECT as_of::DATE AS as_of, end_of_day(as_of, tz) AS cutoff,
           CASE WHEN basis IN ('due', 'created') THEN basis::VARCHAR
                ELSE error('aging_basis must be ''due'' or ''created'', not ' || coalesce(basis::VARCHAR, 'NULL'))
           END AS basis,
           bucket_1::INTEGER AS b1, bucket_2::INTEGER AS b2, bucket_3::INTEGER AS b3
),
items AS (
    -- The payment link's name of a payment request is the payer's name: the item is what the
    -- request asks payment for, from the request itself when billsync holds it.
    SELECT u.account, 'unpaid transaction' AS source, u.type, u.id, u.payment_link_id,
           CASE WHEN u.type = 'payment_request' AND r.id IS NOT NULL THEN request_item(r.description, r.link, u.payment_link_name)
                ELSE u.payment_link_name END AS name,
           u.customer_id, u.customer_name, u.customer_email,
           u.created_at, u.expired_at,
           CASE WHEN h.known_2 THEN TRY_CAST(h.value_2 AS BIGINT) ELSE u.amount END AS amount, u.payment_url
    FROM unpaid_transactions u
    -- equality only: a join condition on u.type made DuckDB plan a nested loop (35 s at 1M records)
    LEFT JOIN payment_requests r ON r.account = u.account AND r.id = u.payment_link_id
    LEFT JOIN changes_at('unpaid_transactions', end_of_day(as_of, tz), 'status', 'amount', account := account) h
           ON h.account = u.account AND h.record_id = u.id
    WHERE (account IS NULL OR u.account = account)
      AND u.created_at < end_of_day(as_of, tz) AND h.deleted IS NOT TRUE
    UNION ALL
    SELECT i.account, 'invoice', 'invoice', i.id, i.id,
           i.name, i.customer_id, i.customer_name, i.customer_email,
           i.created_at, i.expired_at,
           CASE WHEN h.known_2 THEN TRY_CAST(h.value_2 AS BIGINT) ELSE i.amount END, NULL
    FROM invoices i
    LEFT JOIN changes_at('invoices', end_of_day(as_of, tz), 'status', 'amount', account := account) h
           ON h.account = i.account AND h.record_id = i.id
    -- an anti join, not NOT EXISTS: DuckDB's plan for the correlated subquery buffered every
    -- open invoice, all columns, before it removed them
    ANTI JOIN unpaid_transactions u ON u.account = i.account AND u.payment_link_id = i.id
    WHERE (account IS NULL OR i.account = account)
      AND i.created_at < end_of_day(as_of, tz) AND h.deleted IS NOT TRUE
      AND CASE WHEN h.known_1 THEN h.value_1 ELSE i.status END = 'active'
    UNION ALL
    -- A payment request has no customer: its name (whom it was made out to)
    -- stands in for one; the item is what it asks payment for.
    SELECT r.account, 'payment request', 'payment_request', r.id, r.id,
           request_item(r.description, r.link, r.name), NULL, r.name, NULL,
           r.created_at, r.expired_at,
           CASE WHEN h.known_2 THEN TRY_CAST(h.value_2 AS BIGINT) ELSE r.amount END, NULL
    FROM payment_requests r
    LEFT JOIN changes_at('payment_requests', end_of_day(as_of, tz), 'status', 'amount', account := account) h
           ON h.account = r.account AND h.record_id = r.id
    ANTI JOIN unpaid_transactions u ON u.account = r.account AND u.payment_link_id = r.id
    WHERE (account IS NULL OR r.account = account)
      AND r.created_at < end_of_day(as_of, tz) AND h.deleted IS NOT TRUE
      AND CASE WHEN h.known_1 THEN h.value_1 ELSE r.status END IN ('unpaid', 'active')
)
-- Dates are local dates in tz; local_time() gives a plain TIMESTAMP, so the day arithmetic stays
-- on the fast path. The zone comes from the parameter, a constant, never from a column: per row,
-- timezone() would look the zone up again for every value.
SELECT i.*,
       local_time(i.created_at, tz)::DATE AS created_date,
       CASE WHEN p.basis = 'created' THEN local_time(i.created_at, tz)::DATE
            -- created + terms days, as created_at + to_days(terms) in a UTC session (days of 24
            -- hours), without ICU's calendar arithmetic (several µs a row)
            ELSE local_time(coalesce(i.expired_at, make_timestamptz(epoch_us(i.created_at) + payment_terms_days::INTEGER * 86400000000)), tz)::DATE
       END AS due_date,
       p.as_of - due_date AS days_overdue,
       CASE WHEN days_overdue <= 0 THEN 0
            WHEN days_overdue <= p.b1 THEN 1
            WHEN days_overdue <= p.b2 THEN 2
            WHEN days_overdue <= p.b3 THEN 3
            ELSE 4 END AS bucket,
       CASE bucket WHEN 0 THEN 'Current'
                   WHEN 1 THEN '1-' || p.b1
                   WHEN 2 THEN (p.b1 + 1) || '-' || p.b2
                   WHEN 3 THEN (p.b2 + 1) || '-' || p.b3
                   ELSE 'Over ' || p.b3 END AS bucket_label
FROM items i, p;
