-- Credit history records (GET /credit/v1/credit/customer/paginate-credit-history/{customerId}).
-- Incremental: upserted by id, never marked deleted. Some responses carry one
-- signed `amount` instead of credit/debit: credit = max(amount, 0), debit = max(-amount, 0).

-- name: project
CREATE OR REPLACE TEMP TABLE projected AS
WITH p AS (
    SELECT seq, page, idx, raw::JSON AS raw, raw_hash, json_transform(raw, '{
        "id": "VARCHAR", "customerId": "VARCHAR", "productId": "VARCHAR", "merchantId": "VARCHAR",
        "createdAt": "VARCHAR", "expiredAt": "VARCHAR", "credit": "VARCHAR", "debit": "VARCHAR",
        "amount": "VARCHAR", "status": "VARCHAR", "walletType": "VARCHAR", "type": "VARCHAR",
        "membershipTierId": "VARCHAR"}') AS r
    FROM parse_input
), t AS (
    SELECT *, bs_ts(r.createdAt) AS created_at, bs_ts(r.expiredAt) AS expired_at,
           bs_dec(r.credit) AS credit_in, bs_dec(r.debit) AS debit_in, bs_dec(r.amount) AS amount_in
    FROM p
)
SELECT c.account, bs_blank(r.id) AS id,
       r.customerId AS customer_id, r.productId AS product_id, r.merchantId AS merchant_id,
       created_at, expired_at,
       coalesce(credit_in, CASE WHEN debit_in IS NULL THEN greatest(amount_in, 0) END) AS credit,
       coalesce(debit_in, CASE WHEN credit_in IS NULL THEN greatest(-amount_in, 0) END) AS debit,
       r.status AS status, r.walletType AS wallet_type, r.type AS type, r.membershipTierId AS membership_tier_id,
       raw, raw_hash, c.run_id AS last_seen_run, c.observed_at AS last_seen_at, NULL::TIMESTAMPTZ AS deleted_upstream_at,
       seq AS x_seq, page AS x_page, idx AS x_idx,
       list_filter([
           CASE WHEN r IS NULL THEN 'not a JSON object' END,
           CASE WHEN r IS NOT NULL AND bs_blank(r.id) IS NULL THEN 'id: missing' END,
           bs_bad('credit', r.credit, credit_in, 'a number'),
           bs_bad('debit', r.debit, debit_in, 'a number'),
           bs_bad('amount', r.amount, amount_in, 'a number'),
           bs_bad('createdAt', r.createdAt, created_at, 'a timestamp'),
           bs_when('createdAt', r.createdAt, created_at, c.latest_at, c.clocks),
           bs_bad('expiredAt', r.expiredAt, expired_at, 'a timestamp'),
           bs_when('expiredAt', r.expiredAt, expired_at, NULL::TIMESTAMPTZ, NULL::VARCHAR)
       ], x -> x IS NOT NULL) AS x_problems
FROM t, merge_ctx c;
