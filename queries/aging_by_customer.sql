-- Unpaid aging per customer: count of open items and outstanding amount per
-- overdue bucket, from the same open items as aging_detail.sql (the aging_items
-- block is identical in both files; a test keeps it so).
--
-- Parameters (SET VARIABLE name = value; before running this file to change one):
--   as_of               DATE     report date, items open at the end of this day   default current_date
--   tz                  VARCHAR  time zone of "the end of the day" and of dates    default 'Asia/Jakarta'
--   account             VARCHAR  only this billsync account; NULL = all           default NULL
--   aging_basis         VARCHAR  'due' (due date) or 'created' (created date)     default 'due'
--   payment_terms_days  INTEGER  due = created + terms when the API sent no expiredAt  default 14
--   bucket_1/2/3        INTEGER  upper bounds of the overdue buckets in days       default 30, 60, 90
--
-- A past as_of is answered from the change history: an item counts when it was
-- created before the cutoff and its last lifecycle change observed by then was
-- not '_deleted' (one first seen later, still unpaid, was unpaid at the cutoff too).
SET VARIABLE as_of = coalesce(getvariable('as_of'), current_date);
SET VARIABLE tz = coalesce(getvariable('tz'), 'Asia/Jakarta');
SET VARIABLE aging_basis = coalesce(getvariable('aging_basis'), 'due');
SET VARIABLE payment_terms_days = coalesce(getvariable('payment_terms_days'), 14);
SET VARIABLE bucket_1 = coalesce(getvariable('bucket_1'), 30);
SET VARIABLE bucket_2 = coalesce(getvariable('bucket_2'), 60);
SET VARIABLE bucket_3 = coalesce(getvariable('bucket_3'), 90);

-- BEGIN aging_items (identical in aging_detail.sql and aging_by_customer.sql)
WITH params AS (
    SELECT getvariable('as_of')::DATE AS as_of,
           timezone(getvariable('tz'), (getvariable('as_of')::DATE + 1)::TIMESTAMP) AS cutoff,
           getvariable('tz')::VARCHAR AS tz,
           getvariable('account')::VARCHAR AS account,
           CASE WHEN getvariable('aging_basis') IN ('due', 'created') THEN getvariable('aging_basis')::VARCHAR
                ELSE error('aging_basis must be ''due'' or ''created'', not ' || coalesce(getvariable('aging_basis')::VARCHAR, 'NULL'))
           END AS basis,
           getvariable('payment_terms_days')::INTEGER AS terms,
           getvariable('bucket_1')::INTEGER AS b1,
           getvariable('bucket_2')::INTEGER AS b2,
           getvariable('bucket_3')::INTEGER AS b3
),
-- Every branch reads the change history of its own entity only, in two small
-- aggregates: h, status and amount at the cutoff of records whose status or
-- amount changed (the last new value observed by then, else the first old
-- value observed after it; {v: ...} keeps a NULL value apart from "no change
-- on that side"), and g, records whose last lifecycle row by the cutoff is
-- '_deleted'. Records without such rows, most of them, join nothing. (One
-- aggregate over all three entities, joined three times, held 25-35 MB more
-- at 1M records: see docs/reports.md.)
items AS (
    SELECT u.account, 'unpaid transaction' AS source, u.type, u.id, u.payment_link_id,
           u.payment_link_name AS name, u.customer_id, u.customer_name, u.customer_email,
           u.created_at, u.expired_at, CASE WHEN h.amount_before IS NOT NULL THEN TRY_CAST(h.amount_before.v AS BIGINT)
                WHEN h.amount_after IS NOT NULL THEN TRY_CAST(h.amount_after.v AS BIGINT) ELSE u.amount END AS amount, u.payment_url
    FROM unpaid_transactions u
    JOIN params p ON p.account IS NULL OR u.account = p.account
    LEFT JOIN (SELECT c.account, c.record_id,
                   arg_max({v: c.new_value}, c.observed_at) FILTER (c.field = 'status' AND c.observed_at <= p.cutoff) AS status_before,
                   arg_min({v: c.old_value}, c.observed_at) FILTER (c.field = 'status' AND c.observed_at > p.cutoff) AS status_after,
                   arg_max({v: c.new_value}, c.observed_at) FILTER (c.field = 'amount' AND c.observed_at <= p.cutoff) AS amount_before,
                   arg_min({v: c.old_value}, c.observed_at) FILTER (c.field = 'amount' AND c.observed_at > p.cutoff) AS amount_after
              FROM record_changes c, params p
              WHERE c.entity = 'unpaid_transactions' AND c.field IN ('status', 'amount') AND (p.account IS NULL OR c.account = p.account)
              GROUP BY c.account, c.record_id) h ON h.account = u.account AND h.record_id = u.id
    LEFT JOIN (SELECT c.account, c.record_id FROM record_changes c, params p
              WHERE c.entity = 'unpaid_transactions' AND c.field IN ('_created', '_deleted', '_restored') AND c.observed_at <= p.cutoff
                AND (p.account IS NULL OR c.account = p.account)
              GROUP BY c.account, c.record_id HAVING arg_max(c.field, c.observed_at) = '_deleted') g ON g.account = u.account AND g.record_id = u.id
    WHERE u.created_at < p.cutoff AND g.record_id IS NULL
    UNION ALL
    SELECT i.account, 'invoice', 'invoice', i.id, i.id,
           i.name, i.customer_id, i.customer_name, i.customer_email,
           i.created_at, i.expired_at, CASE WHEN h.amount_before IS NOT NULL THEN TRY_CAST(h.amount_before.v AS BIGINT)
                WHEN h.amount_after IS NOT NULL THEN TRY_CAST(h.amount_after.v AS BIGINT) ELSE i.amount END, NULL
    FROM invoices i
    JOIN params p ON p.account IS NULL OR i.account = p.account
    LEFT JOIN (SELECT c.account, c.record_id,
                   arg_max({v: c.new_value}, c.observed_at) FILTER (c.field = 'status' AND c.observed_at <= p.cutoff) AS status_before,
                   arg_min({v: c.old_value}, c.observed_at) FILTER (c.field = 'status' AND c.observed_at > p.cutoff) AS status_after,
                   arg_max({v: c.new_value}, c.observed_at) FILTER (c.field = 'amount' AND c.observed_at <= p.cutoff) AS amount_before,
                   arg_min({v: c.old_value}, c.observed_at) FILTER (c.field = 'amount' AND c.observed_at > p.cutoff) AS amount_after
              FROM record_changes c, params p
              WHERE c.entity = 'invoices' AND c.field IN ('status', 'amount') AND (p.account IS NULL OR c.account = p.account)
              GROUP BY c.account, c.record_id) h ON h.account = i.account AND h.record_id = i.id
    LEFT JOIN (SELECT c.account, c.record_id FROM record_changes c, params p
              WHERE c.entity = 'invoices' AND c.field IN ('_created', '_deleted', '_restored') AND c.observed_at <= p.cutoff
                AND (p.account IS NULL OR c.account = p.account)
              GROUP BY c.account, c.record_id HAVING arg_max(c.field, c.observed_at) = '_deleted') g ON g.account = i.account AND g.record_id = i.id
    WHERE i.created_at < p.cutoff AND g.record_id IS NULL
      AND CASE WHEN h.status_before IS NOT NULL THEN h.status_before.v
                   WHEN h.status_after IS NOT NULL THEN h.status_after.v ELSE i.status END = 'active'
      AND NOT EXISTS (SELECT 1 FROM unpaid_transactions u WHERE u.account = i.account AND u.payment_link_id = i.id)
    UNION ALL
    -- A payment request has no customer: its name (whom it was made out to)
    -- stands in for one; the item is what it asks payment for.
    SELECT r.account, 'payment request', 'payment_request', r.id, r.id,
           coalesce(nullif(trim(left(regexp_replace(r.description, '<[^>]*>', '', 'g'), 80)), ''), r.link, r.name), NULL, r.name, NULL,
           r.created_at, r.expired_at, CASE WHEN h.amount_before IS NOT NULL THEN TRY_CAST(h.amount_before.v AS BIGINT)
                WHEN h.amount_after IS NOT NULL THEN TRY_CAST(h.amount_after.v AS BIGINT) ELSE r.amount END, NULL
    FROM payment_requests r
    JOIN params p ON p.account IS NULL OR r.account = p.account
    LEFT JOIN (SELECT c.account, c.record_id,
                   arg_max({v: c.new_value}, c.observed_at) FILTER (c.field = 'status' AND c.observed_at <= p.cutoff) AS status_before,
                   arg_min({v: c.old_value}, c.observed_at) FILTER (c.field = 'status' AND c.observed_at > p.cutoff) AS status_after,
                   arg_max({v: c.new_value}, c.observed_at) FILTER (c.field = 'amount' AND c.observed_at <= p.cutoff) AS amount_before,
                   arg_min({v: c.old_value}, c.observed_at) FILTER (c.field = 'amount' AND c.observed_at > p.cutoff) AS amount_after
              FROM record_changes c, params p
              WHERE c.entity = 'payment_requests' AND c.field IN ('status', 'amount') AND (p.account IS NULL OR c.account = p.account)
              GROUP BY c.account, c.record_id) h ON h.account = r.account AND h.record_id = r.id
    LEFT JOIN (SELECT c.account, c.record_id FROM record_changes c, params p
              WHERE c.entity = 'payment_requests' AND c.field IN ('_created', '_deleted', '_restored') AND c.observed_at <= p.cutoff
                AND (p.account IS NULL OR c.account = p.account)
              GROUP BY c.account, c.record_id HAVING arg_max(c.field, c.observed_at) = '_deleted') g ON g.account = r.account AND g.record_id = r.id
    WHERE r.created_at < p.cutoff AND g.record_id IS NULL
      AND CASE WHEN h.status_before IS NOT NULL THEN h.status_before.v
                   WHEN h.status_after IS NOT NULL THEN h.status_after.v ELSE r.status END IN ('unpaid', 'active')
      AND NOT EXISTS (SELECT 1 FROM unpaid_transactions u WHERE u.account = r.account AND u.payment_link_id = r.id)
),
-- Dates are local dates in tz; timezone() gives a plain TIMESTAMP, so the day
-- arithmetic below stays on the fast path. The zone and the terms are read with
-- getvariable(), a constant, not from params: per row, timezone() would look
-- the zone up again for every value (half the time of the collections query).
aged AS (
    SELECT i.*,
           CASE WHEN p.basis = 'created' THEN timezone(getvariable('tz'), i.created_at)::DATE
                ELSE timezone(getvariable('tz'), coalesce(i.expired_at, i.created_at + to_days(getvariable('payment_terms_days')::INTEGER)))::DATE
           END AS due_date,
           p.as_of - due_date AS days_overdue,
           CASE WHEN days_overdue <= 0 THEN 0
                WHEN days_overdue <= p.b1 THEN 1
                WHEN days_overdue <= p.b2 THEN 2
                WHEN days_overdue <= p.b3 THEN 3
                ELSE 4 END AS bucket
    FROM items i, params p
)
-- END aging_items
SELECT a.account, a.customer_name, a.customer_email, a.customer_id,
       count(*) AS items,
       coalesce(sum(a.amount) FILTER (a.bucket = 0), 0)::BIGINT AS bucket_0,
       coalesce(sum(a.amount) FILTER (a.bucket = 1), 0)::BIGINT AS bucket_1,
       coalesce(sum(a.amount) FILTER (a.bucket = 2), 0)::BIGINT AS bucket_2,
       coalesce(sum(a.amount) FILTER (a.bucket = 3), 0)::BIGINT AS bucket_3,
       coalesce(sum(a.amount) FILTER (a.bucket = 4), 0)::BIGINT AS bucket_4,
       sum(a.amount)::BIGINT AS outstanding,
       max(a.days_overdue) FILTER (a.days_overdue > 0) AS oldest_days_overdue
FROM aged a
GROUP BY a.account, a.customer_name, a.customer_email, a.customer_id
ORDER BY outstanding DESC, a.account, a.customer_name, a.customer_id;
