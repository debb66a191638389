-- raw_hash becomes a UHUGEINT: the same 128 bits (the first 16 bytes of the SHA-256 of a
-- record's raw JSON, read big-endian), fixed-width. As a BLOB DuckDB carried, compressed and
-- stored 16 random bytes a row like a string, which made a first sync about 3 CPU-s dearer at
-- scale 100 (docs/performance.md, "Unchanged records told by a hash"); the loader stages the
-- value as two UBIGINT halves (loader.go, rawHash). Stored values are converted bit for bit,
-- so stored rows still equal freshly staged identical records and nothing is hashed again.
ALTER TABLE customers ALTER COLUMN raw_hash TYPE UHUGEINT USING raw_hash::BIT::UHUGEINT;
ALTER TABLE products ALTER COLUMN raw_hash TYPE UHUGEINT USING raw_hash::BIT::UHUGEINT;
ALTER TABLE payment_requests ALTER COLUMN raw_hash TYPE UHUGEINT USING raw_hash::BIT::UHUGEINT;
ALTER TABLE invoices ALTER COLUMN raw_hash TYPE UHUGEINT USING raw_hash::BIT::UHUGEINT;
ALTER TABLE unpaid_transactions ALTER COLUMN raw_hash TYPE UHUGEINT USING raw_hash::BIT::UHUGEINT;
ALTER TABLE reviews ALTER COLUMN raw_hash TYPE UHUGEINT USING raw_hash::BIT::UHUGEINT;
ALTER TABLE credit_ledger ALTER COLUMN raw_hash TYPE UHUGEINT USING raw_hash::BIT::UHUGEINT;
ALTER TABLE webhook_deliveries ALTER COLUMN raw_hash TYPE UHUGEINT USING raw_hash::BIT::UHUGEINT;
