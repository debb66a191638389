-- The warehouse's own macros and views, in one place. Migrations create and change tables; this
-- file holds what is derived from them. migrate() applies it after the migrations every time a
-- build opens the warehouse, so every published file carries the definitions of the billsync that
-- wrote it and a change here needs no migration. Every statement is CREATE OR REPLACE MACRO or VIEW
-- (a test checks it); a macro must be defined after the macros it calls. A migration must not
-- call these macros: it would get today's definition, not the one of its time. (Migrations
-- 0002, 0004 and 0006 only defined macros and views, which are here now; files that applied
-- them keep the rows in schema_migrations.)
--
-- Macros whose name starts with bs_ type API values in the merge SQL (../merge). The reports'
-- macros and views (aging_items, end_of_day, ...) are not the warehouse's: they live with the
-- report queries (queries/macros), and the sync run installs them in the file it publishes.

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
-- a day after the later of the service's clock (its Date header, when consistent) and this
-- machine's (epoch microseconds land in the year 57971; a record dated 2999 would freeze a
-- cursor). `clocks` names the clocks latest comes from, with their times, for the message.
-- latest NULL checks only the lower bound (expiry times may lie in the future).
CREATE OR REPLACE MACRO bs_when(field, s, v, latest, clocks) AS
    CASE
        WHEN v IS NULL THEN NULL
        WHEN v < TIMESTAMPTZ '2000-01-01 00:00:00+00' THEN
            field || ' ' || bs_shown(s) ||
            CASE WHEN regexp_full_match(trim(s), '\d{9,10}') THEN ' looks like epoch seconds, not milliseconds'
                 ELSE ' is before 2000-01-01' END
        WHEN v > latest THEN
            field || ' ' || bs_shown(s) ||
            CASE WHEN regexp_full_match(trim(s), '\d{15,17}') THEN ' looks like epoch microseconds, not milliseconds'
                 ELSE ' is more than a day after ' || clocks END
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
