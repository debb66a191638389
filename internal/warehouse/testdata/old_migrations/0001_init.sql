-- Schema of the billsync warehouse. Every entity table keeps the record's exact
-- JSON in `raw` and typed columns derived from it by the merge SQL in ../merge.
-- (account, id) is the logical key; there are no PRIMARY KEY constraints because
-- they made bulk loads 2.4x slower and files 4x larger: the merge keeps keys unique.

-- bs_int: an integer sent as a JSON number or a string ("123", "123.0"); NULL when not integral.
CREATE OR REPLACE MACRO bs_int(s) AS
    TRY_CAST(regexp_extract(s, '^\s*(-?\d+)(\.0*)?\s*$', 1) AS BIGINT);

-- bs_ts: any time the API sends -> TIMESTAMPTZ in UTC, independent of the session time zone.
-- Epoch milliseconds (number or string), ISO 8601 with Z or an offset, or ISO 8601 without
-- an offset (read as UTC). NULL when the text is none of these.
CREATE OR REPLACE MACRO bs_ts(s) AS
    CASE
        WHEN s IS NULL THEN NULL
        WHEN regexp_full_match(s, '\s*-?\d+(\.0*)?\s*') THEN make_timestamptz(bs_int(s) * 1000)
        WHEN regexp_matches(s, '([zZ]|[+-]\d\d(:?\d\d)?)\s*$') THEN TRY_CAST(s AS TIMESTAMPTZ)
        ELSE timezone('UTC', TRY_CAST(s AS TIMESTAMP))
    END;

-- bs_num / bs_dec: a number sent as a JSON number or a string.
CREATE OR REPLACE MACRO bs_num(s) AS TRY_CAST(trim(s) AS DOUBLE);
CREATE OR REPLACE MACRO bs_dec(s) AS TRY_CAST(trim(s) AS DECIMAL(20,4));

-- bs_blank: treats "" like a missing value, so empty strings never fail a typed column.
CREATE OR REPLACE MACRO bs_blank(s) AS nullif(trim(s), '');

-- bs_bad: a validation message when text s is present but its typed value v is NULL.
CREATE OR REPLACE MACRO bs_bad(field, s, v, what) AS
    CASE WHEN bs_blank(s) IS NOT NULL AND v IS NULL
         THEN field || ': ' || to_json(s)::VARCHAR || ' is not ' || what END;

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

CREATE TABLE customers (
    account VARCHAR, id VARCHAR,
    email VARCHAR, mobile VARCHAR, name VARCHAR, status VARCHAR,
    created_at TIMESTAMPTZ, updated_at TIMESTAMPTZ, user_id VARCHAR,
    raw JSON,
    first_seen_run BIGINT, last_seen_run BIGINT, first_seen_at TIMESTAMPTZ, last_seen_at TIMESTAMPTZ,
    deleted_upstream_at TIMESTAMPTZ
);

CREATE TABLE products (
    account VARCHAR, id VARCHAR,
    name VARCHAR, type VARCHAR, sub_type VARCHAR, status VARCHAR, amount BIGINT, category VARCHAR,
    description VARCHAR, link VARCHAR, purchase_limit BIGINT, redirect_url VARCHAR, installment_id VARCHAR,
    created_at TIMESTAMPTZ, link_url VARCHAR, link_payment VARCHAR,
    membership_tier JSON, event JSON, "order" JSON, cover_image JSON, multiple_image JSON,
    user_id VARCHAR, qty BIGINT, detail_fetched_at TIMESTAMPTZ,
    raw JSON,
    first_seen_run BIGINT, last_seen_run BIGINT, first_seen_at TIMESTAMPTZ, last_seen_at TIMESTAMPTZ,
    deleted_upstream_at TIMESTAMPTZ
);

CREATE TABLE product_variants (
    account VARCHAR, product_id VARCHAR, id VARCHAR,
    name VARCHAR, description VARCHAR, amount BIGINT, purchase_limit BIGINT, notes VARCHAR,
    redirect_url VARCHAR, status VARCHAR, created_at TIMESTAMPTZ,
    raw JSON,
    first_seen_run BIGINT, last_seen_run BIGINT, first_seen_at TIMESTAMPTZ, last_seen_at TIMESTAMPTZ,
    deleted_upstream_at TIMESTAMPTZ
);

CREATE TABLE payment_requests (
    account VARCHAR, id VARCHAR,
    amount BIGINT, category VARCHAR, created_at TIMESTAMPTZ, description VARCHAR, link VARCHAR,
    type VARCHAR, status VARCHAR, name VARCHAR, purchase_limit BIGINT, redirect_url VARCHAR,
    installment_id VARCHAR, expired_at TIMESTAMPTZ,
    user_id VARCHAR, qty BIGINT, detail_fetched_at TIMESTAMPTZ,
    raw JSON,
    first_seen_run BIGINT, last_seen_run BIGINT, first_seen_at TIMESTAMPTZ, last_seen_at TIMESTAMPTZ,
    deleted_upstream_at TIMESTAMPTZ
);

CREATE TABLE invoices (
    account VARCHAR, id VARCHAR,
    amount BIGINT, category VARCHAR, created_at TIMESTAMPTZ, description VARCHAR, link VARCHAR,
    type VARCHAR, status VARCHAR, name VARCHAR, redirect_url VARCHAR,
    customer_id VARCHAR, customer_email VARCHAR, customer_name VARCHAR, customer_mobile VARCHAR,
    expired_at TIMESTAMPTZ,
    raw JSON,
    first_seen_run BIGINT, last_seen_run BIGINT, first_seen_at TIMESTAMPTZ, last_seen_at TIMESTAMPTZ,
    deleted_upstream_at TIMESTAMPTZ
);

CREATE TABLE invoice_transactions (
    account VARCHAR, invoice_id VARCHAR, id VARCHAR,
    status VARCHAR,
    raw JSON,
    first_seen_run BIGINT, last_seen_run BIGINT, first_seen_at TIMESTAMPTZ, last_seen_at TIMESTAMPTZ,
    deleted_upstream_at TIMESTAMPTZ
);

CREATE TABLE unpaid_transactions (
    account VARCHAR, id VARCHAR,
    created_at TIMESTAMPTZ, type VARCHAR, amount BIGINT, status VARCHAR, payment_link_id VARCHAR,
    customer_id VARCHAR, customer_email VARCHAR, customer_name VARCHAR, customer_mobile VARCHAR,
    payment_link_name VARCHAR, payment_url VARCHAR, expired_at TIMESTAMPTZ,
    raw JSON,
    first_seen_run BIGINT, last_seen_run BIGINT, first_seen_at TIMESTAMPTZ, last_seen_at TIMESTAMPTZ,
    deleted_upstream_at TIMESTAMPTZ
);

CREATE TABLE reviews (
    account VARCHAR, id VARCHAR,
    created_at TIMESTAMPTZ, updated_at TIMESTAMPTZ, customer_id VARCHAR, customer_name VARCHAR,
    message VARCHAR, payment_link_id VARCHAR, product_name VARCHAR, product_type VARCHAR,
    rating DOUBLE, status VARCHAR, user_id VARCHAR,
    raw JSON,
    first_seen_run BIGINT, last_seen_run BIGINT, first_seen_at TIMESTAMPTZ, last_seen_at TIMESTAMPTZ,
    deleted_upstream_at TIMESTAMPTZ
);

CREATE TABLE credit_ledger (
    account VARCHAR, id VARCHAR,
    customer_id VARCHAR, product_id VARCHAR, merchant_id VARCHAR,
    created_at TIMESTAMPTZ, expired_at TIMESTAMPTZ,
    credit DECIMAL(20,4), debit DECIMAL(20,4),
    status VARCHAR, wallet_type VARCHAR, type VARCHAR, membership_tier_id VARCHAR,
    raw JSON,
    first_seen_run BIGINT, last_seen_run BIGINT, first_seen_at TIMESTAMPTZ, last_seen_at TIMESTAMPTZ,
    deleted_upstream_at TIMESTAMPTZ
);

CREATE TABLE webhook_deliveries (
    account VARCHAR, id VARCHAR,
    user_id VARCHAR, created_at TIMESTAMPTZ, updated_at TIMESTAMPTZ, next_delivery TIMESTAMPTZ,
    event_type VARCHAR, event_data JSON, payload VARCHAR,
    payment_link_id VARCHAR, payment_link_transaction_id VARCHAR, response_payload VARCHAR,
    source VARCHAR, status VARCHAR, type VARCHAR, webhook_type VARCHAR, url_destination VARCHAR,
    raw JSON,
    first_seen_run BIGINT, last_seen_run BIGINT, first_seen_at TIMESTAMPTZ, last_seen_at TIMESTAMPTZ,
    deleted_upstream_at TIMESTAMPTZ
);

-- Append-only: one row per observed change of a tracked field, plus '_created',
-- '_deleted' and '_restored' lifecycle rows. observed_at is when billsync saw it.
CREATE TABLE record_changes (
    account VARCHAR, entity VARCHAR, record_id VARCHAR, field VARCHAR,
    old_value VARCHAR, new_value VARCHAR,
    observed_at TIMESTAMPTZ, run_id BIGINT
);

CREATE TABLE sync_runs (
    id BIGINT, account VARCHAR, status VARCHAR,
    started_at TIMESTAMPTZ, finished_at TIMESTAMPTZ,
    records BIGINT, requests BIGINT, retries BIGINT, error VARCHAR
);

CREATE TABLE sync_streams (
    run_id BIGINT, stream VARCHAR, entity VARCHAR,
    started_at TIMESTAMPTZ, finished_at TIMESTAMPTZ,
    pages BIGINT, records BIGINT, requests BIGINT, retries BIGINT,
    complete BOOLEAN, error VARCHAR
);

CREATE TABLE sync_cursors (
    account VARCHAR, stream VARCHAR, value VARCHAR, run_id BIGINT, updated_at TIMESTAMPTZ
);

CREATE TABLE credit_fetch_state (
    account VARCHAR, customer_id VARCHAR, last_fetched_at TIMESTAMPTZ, run_id BIGINT
);

-- Per account and entity: when a stream of it last completed, how many records
-- that run's complete streams of it returned, and how old that is now.
CREATE VIEW table_freshness AS
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
