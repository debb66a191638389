-- The warehouse's macros and views, in one place. Migrations create and change tables; this file
-- holds what is derived from them. migrate() applies it after the migrations every time a build
-- opens the warehouse, so every published file carries the definitions of the billsync that wrote
-- it and a change here needs no migration. Every statement is CREATE OR REPLACE MACRO or VIEW
-- (a test checks it); a macro must be defined after the macros it calls. A migration must not
-- call these macros: it would get today's definition, not the one of its time. (Migrations
-- 0002, 0004 and 0006 only defined macros and views, which are here now; files that applied
-- them keep the rows in schema_migrations.)
--
-- Macros whose name starts with bs_ type API values in the merge SQL (../merge). The others are
-- the report queries' building blocks (queries/*.sql) and the analysts' (docs/warehouse.md):
-- every report query file calls them, so each file runs alone in any DuckDB client.

-- bs_int: an integer sent as a JSON number or a string ("123", "123.0"); NULL when not integral.
-- A canonical integer is recognised by a plain cast round trip, several times cheaper than the
-- regular expression that handles the rest.
CREATE OR REPLACE MACRO bs_int(s) AS
    CASE
        WHEN TRY_CAST(s AS BIGINT)::VARCHAR = s THEN TRY_CAST(s AS BIGINT)
        ELSE TRY_CAST(regexp_extract(s, '^\s*(-?\d+)(\.0*)?\s*$', 1) AS BIGINT)
    END;

-- bs_ts: any time the API sends -> TIMESTAMPTZ in UTC, independent of the session time zone.
-- Epoch milliseconds (number or string), ISO 8601 with Z or an offset, or ISO 8601 without
-- an offset (read as UTC). NULL when the text is none of these. The ISO form with Z (webhook and
-- credit records) and canonical integers skip the regular expressions of the general case and
-- yield exactly what they would (a string ending in Z is never epoch ms).
CREATE OR REPLACE MACRO bs_ts(s) AS
    CASE
        WHEN s IS NULL THEN NULL
        WHEN suffix(s, 'Z') THEN TRY_CAST(s AS TIMESTAMPTZ)
        WHEN TRY_CAST(s AS BIGINT)::VARCHAR = s THEN make_timestamptz(TRY_CAST(s AS BIGINT) * 1000)
        WHEN regexp_full_match(s, '\s*-?\d+(\.0*)?\s*') THEN make_timestamptz(bs_int(s) * 1000)
        WHEN regexp_matches(s, '([zZ]|[+-]\d\d(:?\d\d)?)\s*$') THEN TRY_CAST(s AS TIMESTAMPTZ)
        ELSE timezone('UTC', TRY_CAST(s AS TIMESTAMP))
    END;

-- bs_num / bs_dec: a number sent as a JSON number or a string. Casting text to DECIMAL(20,4)
-- goes through a 128-bit decimal (about 4.5 µs a value, 40 times a DECIMAL(18,4) cast): values
-- with up to 14 integer digits take the 64-bit cast, wider ones the 128-bit cast; both round to
-- four decimals alike.
CREATE OR REPLACE MACRO bs_num(s) AS TRY_CAST(trim(s) AS DOUBLE);
CREATE OR REPLACE MACRO bs_dec(s) AS
    coalesce(TRY_CAST(trim(s) AS DECIMAL(18,4))::DECIMAL(20,4), TRY_CAST(trim(s) AS DECIMAL(20,4)));

-- bs_blank: treats "" like a missing value, so empty strings never fail a typed column.
CREATE OR REPLACE MACRO bs_blank(s) AS nullif(trim(s), '');

-- bs_bad: a validation message when text s is present but its typed value v is NULL.
CREATE OR REPLACE MACRO bs_bad(field, s, v, what) AS
    CASE WHEN bs_blank(s) IS NOT NULL AND v IS NULL
         THEN field || ': ' || to_json(s)::VARCHAR || ' is not ' || what END;

-- bs_path_id: a validation message when an id cannot be one segment of a request path, which
-- the ids of customers, products and payment requests become (credit history, details): "." and
-- ".." are resolved as dot segments by servers and proxies however they are escaped, and a
-- control character is no identifier.
CREATE OR REPLACE MACRO bs_path_id(id) AS
    CASE WHEN id IN ('.', '..') OR regexp_matches(id, '[[:cntrl:]]')
         THEN 'id ' || to_json(id)::VARCHAR || ' cannot be a path segment (it is . or .. or holds a control character)' END;

-- bs_variants: a product's variants as a JSON array: the `variants` array, else
-- the JSON-encoded `variant` string; '[]' when the record says it has none; NULL
-- when it does not say (then stored variants are left alone) or `variant` is unreadable.
CREATE OR REPLACE MACRO bs_variants(variants, variant, raw) AS
    CASE
        WHEN json_type(variants) = 'ARRAY' THEN variants
        WHEN json_type(variant) = 'VARCHAR' THEN
            CASE WHEN json_type(TRY((variant->>'$')::JSON)) = 'ARRAY' THEN TRY((variant->>'$')::JSON) END
        WHEN variant IS NULL AND variants IS NULL
             AND (json_exists(raw, '$.variant') OR json_exists(raw, '$.variants')) THEN '[]'::JSON
    END;

-- bs_shown: a value as a message shows it: a number as it is, anything else quoted.
CREATE OR REPLACE MACRO bs_shown(s) AS
    CASE WHEN regexp_full_match(trim(s), '-?\d+(\.\d*)?') THEN trim(s) ELSE to_json(s)::VARCHAR END;

-- bs_when: a validation message when a time parsed (v, from text s) is implausible: before
-- 2000-01-01 (epoch seconds or 0 read as milliseconds land in 1970), or later than `latest`,
-- the server's clock plus a day (epoch microseconds land in the year 57971; a record dated
-- 2999 would freeze a cursor). latest NULL checks only the lower bound (expiry times may lie
-- in the future).
CREATE OR REPLACE MACRO bs_when(field, s, v, latest) AS
    CASE
        WHEN v IS NULL THEN NULL
        WHEN v < TIMESTAMPTZ '2000-01-01 00:00:00+00' THEN
            field || ' ' || bs_shown(s) ||
            CASE WHEN regexp_full_match(trim(s), '\d{9,10}') THEN ' looks like epoch seconds, not milliseconds'
                 ELSE ' is before 2000-01-01' END
        WHEN v > latest THEN
            field || ' ' || bs_shown(s) ||
            CASE WHEN regexp_full_match(trim(s), '\d{15,17}') THEN ' looks like epoch microseconds, not milliseconds'
                 ELSE ' is more than a day after the server''s clock (' ||
                      strftime(timezone('UTC', latest - INTERVAL 1 DAY), '%Y-%m-%d %H:%M UTC') || ')' END
    END;

-- Per account and entity: when a stream of it last completed, how many records
-- that run's complete streams of it returned, and how old that is now.
CREATE OR REPLACE VIEW table_freshness AS
WITH done AS (
    SELECT r.account, s.entity, s.run_id, max(s.finished_at) AS finished_at, sum(s.records) AS records
    FROM sync_streams s JOIN sync_runs r ON r.id = s.run_id
    WHERE s.complete
    GROUP BY r.account, s.entity, s.run_id
)
SELECT account, entity,
       max(finished_at) AS last_complete_at,
       arg_max(records, finished_at) AS records,
       now() - max(finished_at) AS staleness
FROM done
GROUP BY account, entity;

-- A note for whoever edits the table macros below: a parameter named like a column (account)
-- stands for the parameter wherever the body names it unqualified, so every column in their
-- bodies is written with its table's alias.

-- seconds_between(a, b): the seconds from instant a to instant b, as epoch(b - a) gives them in a
-- UTC session, from the microseconds: the subtraction of two TIMESTAMPTZ goes through ICU's
-- calendar, about 30 µs a value for dates a year apart (8 s for the 250k items of a collections
-- report at 1M records), where this is integer arithmetic.
CREATE OR REPLACE MACRO seconds_between(a, b) AS (epoch_us(b) - epoch_us(a)) / 1000000;

-- local_time(ts, tz): the wall-clock time (TIMESTAMP) in zone tz at the instant ts, what
-- timezone(tz, ts) gives. ICU's timezone() costs about 0.4 µs a value, most of the reports' date
-- arithmetic; where billsync's report command has proven the zone's UTC offset constant over an
-- interval (against Go's zone database and ICU's own answers, internal/report/zone.go) it sets
-- the variables tz_fixed_zone, tz_fixed_from_us, tz_fixed_until_us (Unix microseconds, the
-- interval [from, until)) and tz_fixed_offset_us, and an instant inside is shifted by the offset
-- in integer arithmetic. Anything else, or without those variables, is timezone(tz, ts).
CREATE OR REPLACE MACRO local_time(ts, tz) AS
    CASE WHEN tz = getvariable('tz_fixed_zone')
              AND epoch_us(ts) >= getvariable('tz_fixed_from_us') AND epoch_us(ts) < getvariable('tz_fixed_until_us')
         THEN make_timestamp(epoch_us(ts) + getvariable('tz_fixed_offset_us'))
         ELSE timezone(tz, ts) END;

-- end_of_day(as_of[, tz]): the instant the day as_of ends in time zone tz, the cutoff "as of
-- that day" means in every report.
CREATE OR REPLACE MACRO end_of_day(as_of, tz := 'Asia/Jakarta') AS
    timezone(tz, (as_of::DATE + 1)::TIMESTAMP);

-- changes_at(entity, cutoff[, field_1, field_2, account, lifecycle]): what record_changes says of
-- the records of one entity at the instant cutoff. One row per record with a change of field_1 or
-- field_2, or (unless lifecycle := false) deleted by the cutoff: deleted is true when its last
-- lifecycle row observed by the cutoff is '_deleted' (not '_created' or '_restored'); value_1 and
-- value_2 are the values the fields had then: the last new value observed by the cutoff, else the
-- old value of the first change observed after it. known_1 / known_2 is false when that field
-- never changed: the table's current value is the value then. Records without changes are not
-- returned: join it LEFT.
-- Only records with a '_deleted' row by the cutoff can be deleted then, so only their lifecycle
-- rows are read: every record has a '_created' row, and grouping them all cost more than the
-- rest of the aging query.
CREATE OR REPLACE MACRO changes_at(entity, cutoff, field_1 := NULL, field_2 := NULL, account := NULL,
                                   lifecycle := true) AS TABLE
WITH life AS (
    SELECT c.account, c.record_id, arg_max(c.field, c.observed_at) = '_deleted' AS deleted
    FROM record_changes c
    SEMI JOIN (SELECT d.account, d.record_id FROM record_changes d
               WHERE lifecycle AND d.entity = entity AND d.field = '_deleted' AND d.observed_at <= cutoff
                 AND (account IS NULL OR d.account = account)) d
           ON d.account = c.account AND d.record_id = c.record_id
    WHERE c.entity = entity AND c.field IN ('_created', '_deleted', '_restored') AND c.observed_at <= cutoff
    GROUP BY c.account, c.record_id
),
vals AS (
    -- arg_max_null, not arg_max: a change to NULL is a value too
    SELECT c.account, c.record_id,
           count(c.observed_at) FILTER (c.field = field_1) > 0 AS known_1,
           CASE WHEN count(*) FILTER (c.field = field_1 AND c.observed_at <= cutoff) > 0
                THEN arg_max_null(c.new_value, c.observed_at) FILTER (c.field = field_1 AND c.observed_at <= cutoff)
                ELSE arg_min_null(c.old_value, c.observed_at) FILTER (c.field = field_1 AND c.observed_at > cutoff)
           END AS value_1,
           count(c.observed_at) FILTER (c.field = field_2) > 0 AS known_2,
           CASE WHEN count(*) FILTER (c.field = field_2 AND c.observed_at <= cutoff) > 0
                THEN arg_max_null(c.new_value, c.observed_at) FILTER (c.field = field_2 AND c.observed_at <= cutoff)
                ELSE arg_min_null(c.old_value, c.observed_at) FILTER (c.field = field_2 AND c.observed_at > cutoff)
           END AS value_2
    FROM record_changes c
    WHERE c.entity = entity AND (account IS NULL OR c.account = account) AND c.field IN (field_1, field_2)
    GROUP BY c.account, c.record_id
)
SELECT coalesce(v.account, l.account) AS account, coalesce(v.record_id, l.record_id) AS record_id,
       coalesce(l.deleted, false) AS deleted,
       coalesce(v.known_1, false) AS known_1, v.value_1,
       coalesce(v.known_2, false) AS known_2, v.value_2
FROM vals v
FULL JOIN life l ON l.account = v.account AND l.record_id = v.record_id;

-- request_item(description, link, name): what a payment request asks payment for, as a report's
-- Item column shows it: its description as one line of text (HTML tags and line breaks become
-- spaces), cut at 80 characters, else its link, else its name (whom it was made out to; the
-- service's name of a payment request is the payer's).
CREATE OR REPLACE MACRO request_item(description, link, name) AS
coalesce(nullif(left(trim(regexp_replace(regexp_replace(description, '<[^>]*>', ' ', 'g'), '\s+', ' ', 'g')), 80), ''),
         link, name);

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
CREATE OR REPLACE MACRO aging_items(as_of, tz := 'Asia/Jakarta', account := NULL, basis := 'due',
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

-- open_items(as_of[, tz]): what customers owed at the end of the day as_of (local day in tz), the
-- items of aging_items, all accounts: a past date is answered from record_changes, and before the
-- first sync billsync knows nothing of records already gone. A payment request's name is its own
-- (whom it was made out to), also where it is listed as an unpaid transaction.
CREATE OR REPLACE MACRO open_items(as_of, tz := 'Asia/Jakarta') AS TABLE
SELECT a.account, a.source, a.id, a.payment_link_id,
       CASE WHEN a.type = 'payment_request' THEN a.customer_name ELSE a.name END AS name,
       a.customer_id, a.customer_name, a.customer_email, a.created_at, a.expired_at, a.amount, a.payment_url
FROM aging_items(as_of, tz := tz) a;

-- collection_items(as_of[, tz, account, months]): the invoices and payment requests issued (created)
-- in the `months` months up to as_of's month (in tz), each with what it was at the end of the day
-- as_of: status_then ('deleted' when its last lifecycle row by then was '_deleted'), and when
-- billsync first observed it paid, closed or deleted by then. The API has no paid-at time: paid_at
-- is when billsync first observed the status 'paid' (precision: the sync interval); days_to_pay
-- counts from creation to it, for items paid with an observed transition.
CREATE OR REPLACE MACRO collection_items(as_of, tz := 'Asia/Jakarta', account := NULL, months := 12) AS TABLE
WITH p AS (
    SELECT end_of_day(as_of, tz) AS cutoff,
           timezone(tz, (date_trunc('month', as_of::DATE) - to_months(months::INTEGER - 1))::TIMESTAMP) AS first_month_at
),
seen AS (
    SELECT c.account, c.entity, c.record_id,
           min(c.observed_at) FILTER (c.field = 'status' AND c.new_value = 'paid') AS paid_at,
           min(c.observed_at) FILTER (c.field = 'status' AND c.new_value = 'closed') AS closed_at,
           min(c.observed_at) FILTER (c.field = '_deleted') AS deleted_at
    FROM record_changes c, p
    WHERE c.entity IN ('invoices', 'payment_requests') AND c.observed_at <= p.cutoff
      AND (c.field = 'status' AND c.new_value IN ('paid', 'closed') OR c.field = '_deleted')
      AND (account IS NULL OR c.account = account)
    GROUP BY c.account, c.entity, c.record_id
),
issued AS (
    SELECT i.account, 'invoice' AS kind, i.id, i.name, i.customer_name, i.customer_email, i.created_at, i.amount,
           CASE WHEN h.deleted THEN 'deleted' WHEN h.known_1 THEN h.value_1 ELSE i.status END AS status_then,
           s.paid_at, s.closed_at, s.deleted_at
    FROM invoices i
    LEFT JOIN changes_at('invoices', end_of_day(as_of, tz), 'status', account := account) h
           ON h.account = i.account AND h.record_id = i.id
    LEFT JOIN seen s ON s.account = i.account AND s.entity = 'invoices' AND s.record_id = i.id
    UNION ALL
    SELECT r.account, 'payment request', r.id, r.name, r.name, NULL, r.created_at, r.amount,
           CASE WHEN h.deleted THEN 'deleted' WHEN h.known_1 THEN h.value_1 ELSE r.status END,
           s.paid_at, s.closed_at, s.deleted_at
    FROM payment_requests r
    LEFT JOIN changes_at('payment_requests', end_of_day(as_of, tz), 'status', account := account) h
           ON h.account = r.account AND h.record_id = r.id
    LEFT JOIN seen s ON s.account = r.account AND s.entity = 'payment_requests' AND s.record_id = r.id
)
SELECT s.account, s.kind, s.id, s.name, s.customer_name, s.customer_email, s.amount, s.created_at,
       s.paid_at, s.closed_at,
       date_trunc('month', local_time(s.created_at, tz))::DATE AS month,
       s.status_then, s.deleted_at,
       CASE WHEN s.status_then = 'paid' AND s.paid_at IS NOT NULL
            THEN round(seconds_between(s.created_at, s.paid_at) / 86400, 1) END AS days_to_pay
FROM issued s, p
WHERE (account IS NULL OR s.account = account)
  AND s.created_at < p.cutoff
  AND s.created_at >= p.first_month_at;

-- webhook_deliveries_at(as_of[, tz, account, window_days]): the webhook delivery records created in
-- the window_days days up to the end of the day as_of, with the status and next delivery attempt
-- each had at that cutoff.
CREATE OR REPLACE MACRO webhook_deliveries_at(as_of, tz := 'Asia/Jakarta', account := NULL, window_days := 30) AS TABLE
SELECT w.account, w.id, w.created_at, w.updated_at, w.event_type, w.url_destination,
       w.response_payload, w.payment_link_id, w.payment_link_transaction_id,
       CASE WHEN h.known_1 THEN h.value_1 ELSE w.status END AS status,
       CASE WHEN h.known_2 THEN TRY_CAST(h.value_2 AS TIMESTAMPTZ) ELSE w.next_delivery END AS next_delivery
FROM webhook_deliveries w
LEFT JOIN changes_at('webhook_deliveries', end_of_day(as_of, tz), 'status', 'next_delivery',
                     account := account, lifecycle := false) h
       ON h.account = w.account AND h.record_id = w.id
WHERE (account IS NULL OR w.account = account)
  AND w.created_at >= end_of_day(as_of::DATE - window_days::INTEGER, tz)
  AND w.created_at < end_of_day(as_of, tz);

-- reviews_at(as_of[, tz, account]): the reviews that existed at the end of the day as_of, with the
-- rating each had then.
CREATE OR REPLACE MACRO reviews_at(as_of, tz := 'Asia/Jakarta', account := NULL) AS TABLE
SELECT r.account, r.id, r.created_at, r.customer_id, r.customer_name, r.message,
       r.payment_link_id AS product_id, r.product_name, r.product_type,
       CASE WHEN h.known_1 THEN TRY_CAST(h.value_1 AS DOUBLE) ELSE r.rating END AS rating
FROM reviews r
LEFT JOIN changes_at('reviews', end_of_day(as_of, tz), 'rating', account := account) h
       ON h.account = r.account AND h.record_id = r.id
WHERE (account IS NULL OR r.account = account)
  AND r.created_at < end_of_day(as_of, tz) AND h.deleted IS NOT TRUE;

-- credit_freshness: how fresh billsync's copy of each customer's credit ledger is. billsync reads
-- credit history per customer on a request budget, so copies differ in age. Every customer with a
-- ledger entry, a credit read or a balance the service reported (credit_balance_reports, the
-- write-job journal's table: attach it first, see docs/reports.md), with its last read and that
-- read's age in days at the end of as_of in tz (never later than now), its entries and products,
-- and its state: NEVER FETCHED, OLDER THAN LAST REPORT (the service reported a balance after
-- billsync's last read, or in the same whole second, so the copy cannot confirm it) or OK.
CREATE OR REPLACE MACRO credit_freshness(as_of, tz := 'Asia/Jakarta', account := NULL) AS TABLE
WITH p AS (
    SELECT least(now(), end_of_day(as_of, tz)) AS ref_at
),
ledger AS (
    SELECT l.account, l.customer_id, count(*) AS entries, max(l.created_at) AS last_movement_at,
           count(DISTINCT l.product_id) AS products
    FROM credit_ledger l
    WHERE account IS NULL OR l.account = account
    GROUP BY l.account, l.customer_id
),
reported AS (
    SELECT j.account, j.customer_id, max(j.reported_at) AS last_reported_at
    FROM credit_balance_reports j
    WHERE account IS NULL OR j.account = account
    GROUP BY j.account, j.customer_id
),
seen AS (
    SELECT g.account, g.customer_id FROM ledger g
    UNION SELECT f.account, f.customer_id FROM credit_fetch_state f WHERE account IS NULL OR f.account = account
    UNION SELECT r.account, r.customer_id FROM reported r
)
SELECT s.account, s.customer_id, f.last_fetched_at,
       seconds_between(f.last_fetched_at, p.ref_at) / 86400 AS days_old,
       coalesce(g.entries, 0) AS entries, coalesce(g.products, 0) AS products, g.last_movement_at,
       r.last_reported_at,
       CASE WHEN f.last_fetched_at IS NULL THEN 'NEVER FETCHED'
            WHEN f.last_fetched_at < date_trunc('second', r.last_reported_at) + INTERVAL 1 SECOND THEN 'OLDER THAN LAST REPORT'
            ELSE 'OK' END AS freshness
FROM seen s
CROSS JOIN p
LEFT JOIN ledger g ON g.account = s.account AND g.customer_id = s.customer_id
LEFT JOIN reported r ON r.account = s.account AND r.customer_id = s.customer_id
LEFT JOIN credit_fetch_state f ON f.account = s.account AND f.customer_id = s.customer_id;

-- credit_balances(as_of[, tz, account, period_start]): credit per customer, product and wallet type
-- for the period from period_start (default: the first day of as_of's month) to the end of the
-- day as_of: opening balance, credits by type, debits by type and closing balance, compared with
-- the last balance the service reported in an add-credit response (credit_balance_reports, the
-- write-job journal's table: attach it first, see docs/reports.md; a customer or product this copy
-- lacks is named as the job's plan saw it, credit_report_names).
-- A reported balance is compared with the ledger's balance at the moment it was reported, not with
-- the closing balance. The service stamps the report in whole seconds (its Date header) while
-- ledger entries carry milliseconds, so the entry the report answered for is created within that
-- second, after reported_at: the ledger at report counts every entry created before the end of
-- the reported second. For the same reason a copy read before the end of the reported second may
-- predate the entry (a daemon applies approved top-ups right after its sync): it is not compared.
CREATE OR REPLACE MACRO credit_balances(as_of, tz := 'Asia/Jakarta', account := NULL, period_start := NULL) AS TABLE
WITH p AS (
    SELECT timezone(tz, coalesce(period_start::DATE, date_trunc('month', as_of::DATE)::DATE)::TIMESTAMP) AS start_at,
           end_of_day(as_of, tz) AS cutoff
),
ledger AS (
    SELECT l.*, l.created_at >= p.start_at AS in_period
    FROM credit_ledger l, p
    WHERE (account IS NULL OR l.account = account) AND l.created_at < p.cutoff
),
moves AS (
    SELECT l.account, l.customer_id, l.product_id, l.wallet_type,
           coalesce(sum(l.credit - l.debit) FILTER (NOT l.in_period), 0) AS opening,
           coalesce(sum(l.credit) FILTER (l.in_period AND l.type = 'TOPUP'), 0) AS topup,
           coalesce(sum(l.credit) FILTER (l.in_period AND l.type = 'MERCHANT_TOPUP'), 0) AS merchant_topup,
           coalesce(sum(l.credit) FILTER (l.in_period AND l.type = 'TRIAL_TOPUP'), 0) AS trial_topup,
           coalesce(sum(l.credit) FILTER (l.in_period AND l.type NOT IN ('TOPUP', 'MERCHANT_TOPUP', 'TRIAL_TOPUP')), 0) AS other_credits,
           coalesce(sum(l.debit) FILTER (l.in_period AND l.type = 'CREDIT_USAGE'), 0) AS usage,
           coalesce(sum(l.debit) FILTER (l.in_period AND l.type = 'EXPIRE_VOID'), 0) AS expired_void,
           coalesce(sum(l.debit) FILTER (l.in_period AND l.type NOT IN ('CREDIT_USAGE', 'EXPIRE_VOID')), 0) AS other_debits,
           coalesce(sum(l.credit - l.debit), 0) AS closing,
           max(l.created_at) AS last_movement_at
    FROM ledger l
    GROUP BY l.account, l.customer_id, l.product_id, l.wallet_type
),
reported AS (
    SELECT j.account, j.customer_id, j.product_id,
           arg_max(j.balance, j.reported_at) AS reported_balance, max(j.reported_at) AS reported_at,
           arg_max(j.action_id, j.reported_at) AS action_id
    FROM credit_balance_reports j, p
    WHERE (account IS NULL OR j.account = account) AND j.reported_at < p.cutoff
    GROUP BY j.account, j.customer_id, j.product_id
),
ledger_at_report AS (
    SELECT r.account, r.customer_id, r.product_id, coalesce(sum(l.credit - l.debit), 0) AS ledger_balance
    FROM reported r
    LEFT JOIN credit_ledger l ON l.account = r.account AND l.customer_id = r.customer_id
                              AND l.product_id = r.product_id
                              AND l.created_at < date_trunc('second', r.reported_at) + INTERVAL 1 SECOND
    GROUP BY r.account, r.customer_id, r.product_id
),
keyed AS (
    SELECT coalesce(m.account, r.account) AS account, coalesce(m.customer_id, r.customer_id) AS customer_id,
           coalesce(m.product_id, r.product_id) AS product_id, m.wallet_type,
           coalesce(m.opening, 0) AS opening, coalesce(m.topup, 0) AS topup,
           coalesce(m.merchant_topup, 0) AS merchant_topup, coalesce(m.trial_topup, 0) AS trial_topup,
           coalesce(m.other_credits, 0) AS other_credits, coalesce(m.usage, 0) AS usage,
           coalesce(m.expired_void, 0) AS expired_void, coalesce(m.other_debits, 0) AS other_debits,
           coalesce(m.closing, 0) AS closing, m.last_movement_at,
           r.reported_balance, r.reported_at, r.action_id
    FROM moves m
    FULL JOIN reported r ON r.account = m.account AND r.customer_id = m.customer_id AND r.product_id = m.product_id
)
SELECT k.account, coalesce(c.name, jn.customer_name) AS customer_name,
       coalesce(c.email, jn.customer_email) AS customer_email, k.customer_id,
       coalesce(pr.name, jn.product_name) AS product_name, k.product_id, k.wallet_type,
       k.opening, k.topup, k.merchant_topup, k.trial_topup, k.other_credits,
       k.usage, k.expired_void, k.other_debits, k.closing,
       k.reported_balance, k.reported_at, la.ledger_balance AS ledger_at_report,
       la.ledger_balance - k.reported_balance AS difference,
       f.last_fetched_at AS ledger_fetched_at,
       CASE WHEN k.reported_at IS NULL THEN NULL
            WHEN f.last_fetched_at IS NULL OR f.last_fetched_at < date_trunc('second', k.reported_at) + INTERVAL 1 SECOND
                THEN 'LEDGER OLDER THAN REPORT'
            WHEN la.ledger_balance = k.reported_balance THEN 'OK'
            ELSE 'MISMATCH' END AS reconciliation,
       k.last_movement_at
FROM keyed k
LEFT JOIN customers c ON c.account = k.account AND c.id = k.customer_id
LEFT JOIN products pr ON pr.account = k.account AND pr.id = k.product_id
-- A balance only a job reported, of a customer or product this warehouse copy does not hold, is
-- named as the job's plan saw them (the journal's credit_report_names).
LEFT JOIN credit_report_names jn ON jn.action_id = k.action_id
LEFT JOIN ledger_at_report la ON la.account = k.account AND la.customer_id = k.customer_id AND la.product_id = k.product_id
LEFT JOIN credit_fetch_state f ON f.account = k.account AND f.customer_id = k.customer_id;

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
