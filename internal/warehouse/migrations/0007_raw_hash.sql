-- raw_hash: the first 16 bytes of the SHA-256 of a record's raw JSON, as staged. A list's
-- nightly merge tells a record identical to the stored one by it (merge/common.sql, keys)
-- instead of joining its batch with every stored row's raw JSON, which DuckDB held in the
-- join's hash table and, at the default memory limit, spilled. New rows get it from the
-- loader (loader.go, rawHash); rows stored before get the same value here. Derived tables
-- (product variants, invoice transactions) are rebuilt from their parents and need none.
ALTER TABLE customers ADD COLUMN raw_hash BLOB;
UPDATE customers SET raw_hash = unhex(left(sha256(raw::VARCHAR), 32));
ALTER TABLE products ADD COLUMN raw_hash BLOB;
UPDATE products SET raw_hash = unhex(left(sha256(raw::VARCHAR), 32));
ALTER TABLE payment_requests ADD COLUMN raw_hash BLOB;
UPDATE payment_requests SET raw_hash = unhex(left(sha256(raw::VARCHAR), 32));
ALTER TABLE invoices ADD COLUMN raw_hash BLOB;
UPDATE invoices SET raw_hash = unhex(left(sha256(raw::VARCHAR), 32));
ALTER TABLE unpaid_transactions ADD COLUMN raw_hash BLOB;
UPDATE unpaid_transactions SET raw_hash = unhex(left(sha256(raw::VARCHAR), 32));
ALTER TABLE reviews ADD COLUMN raw_hash BLOB;
UPDATE reviews SET raw_hash = unhex(left(sha256(raw::VARCHAR), 32));
ALTER TABLE credit_ledger ADD COLUMN raw_hash BLOB;
UPDATE credit_ledger SET raw_hash = unhex(left(sha256(raw::VARCHAR), 32));
ALTER TABLE webhook_deliveries ADD COLUMN raw_hash BLOB;
UPDATE webhook_deliveries SET raw_hash = unhex(left(sha256(raw::VARCHAR), 32));
