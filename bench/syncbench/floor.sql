-- The floor's load (syncbench -floor): each entity's raw records, one per line in __FILE__, into
-- the warehouse's table with the same typed columns as its merge (internal/warehouse/merge/*.sql)
-- gives them on the simulator's data, and the raw record in the ZSTD raw column. read_json types
-- the fields in one vectorised pass; POSITIONAL JOIN pairs each row with its record's exact text.
-- No tolerance, no validation, no change history: this is what a load cannot go below.

-- name: customers
INSERT INTO customers BY NAME
SELECT 'floor' AS account, r.id, r.email, r.mobile, r.name, r.status,
       make_timestamptz(r.createdAt * 1000) AS created_at, make_timestamptz(r.updatedAt * 1000) AS updated_at,
       r.userId AS user_id, o.json AS raw,
       1 AS first_seen_run, 1 AS last_seen_run, now() AS first_seen_at, now() AS last_seen_at
FROM read_json(__FILE__, format = 'newline_delimited', columns = {
         id: 'VARCHAR', email: 'VARCHAR', mobile: 'VARCHAR', name: 'VARCHAR', status: 'VARCHAR',
         createdAt: 'BIGINT', updatedAt: 'BIGINT', userId: 'VARCHAR'}) r
POSITIONAL JOIN read_ndjson_objects(__FILE__) o;

-- name: products
INSERT INTO products BY NAME
SELECT 'floor' AS account, r.id, r.name, r.type, r.subType AS sub_type, r.status, r.amount, r.category,
       r.description, r.link, r."limit" AS purchase_limit, r.redirectUrl AS redirect_url,
       r.installmentId AS installment_id, make_timestamptz(r.createdAt * 1000) AS created_at,
       r.linkUrl AS link_url, r.linkPayment AS link_payment, r.membershipTier AS membership_tier,
       r.event, r."order", r.coverImage AS cover_image, r.multipleImage AS multiple_image, o.json AS raw,
       1 AS first_seen_run, 1 AS last_seen_run, now() AS first_seen_at, now() AS last_seen_at
FROM read_json(__FILE__, format = 'newline_delimited', columns = {
         id: 'VARCHAR', name: 'VARCHAR', type: 'VARCHAR', subType: 'VARCHAR', status: 'VARCHAR',
         amount: 'BIGINT', category: 'VARCHAR', description: 'VARCHAR', link: 'VARCHAR', "limit": 'BIGINT',
         redirectUrl: 'VARCHAR', installmentId: 'VARCHAR', createdAt: 'BIGINT', linkUrl: 'VARCHAR',
         linkPayment: 'VARCHAR', membershipTier: 'JSON', event: 'JSON', "order": 'JSON', coverImage: 'JSON',
         multipleImage: 'JSON'}) r
POSITIONAL JOIN read_ndjson_objects(__FILE__) o;

-- name: payment_requests
INSERT INTO payment_requests BY NAME
SELECT 'floor' AS account, r.id, r.amount, r.category, make_timestamptz(r.createdAt * 1000) AS created_at,
       r.description, r.link, r.type, r.status, r.name, r."limit" AS purchase_limit,
       r.redirectUrl AS redirect_url, r.installmentId AS installment_id,
       make_timestamptz(r.expiredAt * 1000) AS expired_at, o.json AS raw,
       1 AS first_seen_run, 1 AS last_seen_run, now() AS first_seen_at, now() AS last_seen_at
FROM read_json(__FILE__, format = 'newline_delimited', columns = {
         id: 'VARCHAR', amount: 'BIGINT', category: 'VARCHAR', createdAt: 'BIGINT', description: 'VARCHAR',
         link: 'VARCHAR', type: 'VARCHAR', status: 'VARCHAR', name: 'VARCHAR', "limit": 'BIGINT',
         redirectUrl: 'VARCHAR', installmentId: 'VARCHAR', expiredAt: 'BIGINT'}) r
POSITIONAL JOIN read_ndjson_objects(__FILE__) o;

-- name: invoices
INSERT INTO invoices BY NAME
SELECT 'floor' AS account, r.id, r.amount, r.category, make_timestamptz(r.createdAt * 1000) AS created_at,
       r.description, r.link, r.type, r.status, r.name, r.redirectUrl AS redirect_url,
       coalesce(r.customerId, r.customer.id) AS customer_id, r.customer.email AS customer_email,
       r.customer.name AS customer_name, r.customer.mobile AS customer_mobile,
       make_timestamptz(r.expiredAt * 1000) AS expired_at, o.json AS raw,
       1 AS first_seen_run, 1 AS last_seen_run, now() AS first_seen_at, now() AS last_seen_at
FROM read_json(__FILE__, format = 'newline_delimited', columns = {
         id: 'VARCHAR', amount: 'BIGINT', category: 'VARCHAR', createdAt: 'BIGINT', description: 'VARCHAR',
         link: 'VARCHAR', type: 'VARCHAR', status: 'VARCHAR', name: 'VARCHAR', redirectUrl: 'VARCHAR',
         customerId: 'VARCHAR', expiredAt: 'BIGINT',
         customer: 'STRUCT(id VARCHAR, email VARCHAR, name VARCHAR, mobile VARCHAR)'}) r
POSITIONAL JOIN read_ndjson_objects(__FILE__) o;

-- name: unpaid_transactions
INSERT INTO unpaid_transactions BY NAME
SELECT 'floor' AS account, r.id, make_timestamptz(r.createdAt * 1000) AS created_at, r.type, r.amount, r.status,
       coalesce(r.paymentLinkId, r.paymentLink.id) AS payment_link_id,
       coalesce(r.customerId, r.customer.id) AS customer_id, r.customer.email AS customer_email,
       r.customer.name AS customer_name, r.customer.mobile AS customer_mobile,
       r.paymentLink.name AS payment_link_name, r.paymentUrl AS payment_url,
       make_timestamptz(r.expiredAt * 1000) AS expired_at, o.json AS raw,
       1 AS first_seen_run, 1 AS last_seen_run, now() AS first_seen_at, now() AS last_seen_at
FROM read_json(__FILE__, format = 'newline_delimited', columns = {
         id: 'VARCHAR', createdAt: 'BIGINT', type: 'VARCHAR', amount: 'BIGINT', status: 'VARCHAR',
         paymentLinkId: 'VARCHAR', customerId: 'VARCHAR', paymentUrl: 'VARCHAR', expiredAt: 'BIGINT',
         customer: 'STRUCT(id VARCHAR, email VARCHAR, name VARCHAR, mobile VARCHAR)',
         paymentLink: 'STRUCT(id VARCHAR, name VARCHAR)'}) r
POSITIONAL JOIN read_ndjson_objects(__FILE__) o;

-- name: reviews
INSERT INTO reviews BY NAME
SELECT 'floor' AS account, r.id, make_timestamptz(r.createdAt * 1000) AS created_at,
       make_timestamptz(r.updatedAt * 1000) AS updated_at, coalesce(r.customerId, r.customer.id) AS customer_id,
       r.customer.name AS customer_name, r.message, coalesce(r.paymentLinkId, r.paymentLink.id) AS payment_link_id,
       r.paymentLink.name AS product_name, r.paymentLink.type AS product_type, r.rating, r.status,
       r.userId AS user_id, o.json AS raw,
       1 AS first_seen_run, 1 AS last_seen_run, now() AS first_seen_at, now() AS last_seen_at
FROM read_json(__FILE__, format = 'newline_delimited', columns = {
         id: 'VARCHAR', createdAt: 'BIGINT', updatedAt: 'BIGINT', customerId: 'VARCHAR', message: 'VARCHAR',
         paymentLinkId: 'VARCHAR', rating: 'DOUBLE', status: 'VARCHAR', userId: 'VARCHAR',
         customer: 'STRUCT(id VARCHAR, name VARCHAR)',
         paymentLink: 'STRUCT(id VARCHAR, name VARCHAR, type VARCHAR)'}) r
POSITIONAL JOIN read_ndjson_objects(__FILE__) o;

-- name: webhook_deliveries
-- The payload is a JSON-encoded string holding {event, data}, parsed once as in the merge.
INSERT INTO webhook_deliveries BY NAME
SELECT 'floor' AS account, r.id, r.userId AS user_id, r.createdAt::TIMESTAMPTZ AS created_at,
       r.updatedAt::TIMESTAMPTZ AS updated_at, r.nextDelivery::TIMESTAMPTZ AS next_delivery,
       r.p.event AS event_type, r.p.data AS event_data,
       r.paymentLinkId AS payment_link_id, r.paymentLinkTransactionId AS payment_link_transaction_id,
       r.responsePayload AS response_payload, r.source, r.status, r.type, r.Webhooktype AS webhook_type,
       r.urlDestination AS url_destination, o.json AS raw,
       1 AS first_seen_run, 1 AS last_seen_run, now() AS first_seen_at, now() AS last_seen_at
FROM (SELECT *, json_transform(payload, '{"event": "VARCHAR", "data": "JSON"}') AS p
      FROM read_json(__FILE__, format = 'newline_delimited', columns = {
               id: 'VARCHAR', userId: 'VARCHAR', createdAt: 'VARCHAR', updatedAt: 'VARCHAR',
               nextDelivery: 'VARCHAR', payload: 'VARCHAR', paymentLinkId: 'VARCHAR',
               paymentLinkTransactionId: 'VARCHAR', responsePayload: 'VARCHAR', source: 'VARCHAR',
               status: 'VARCHAR', type: 'VARCHAR', Webhooktype: 'VARCHAR', urlDestination: 'VARCHAR'})) r
POSITIONAL JOIN read_ndjson_objects(__FILE__) o;
