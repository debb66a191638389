-- The record of applied migrations, kept in every DuckDB file billsync owns.

-- name: create
CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER, name VARCHAR, applied_at TIMESTAMPTZ);

-- name: applied
SELECT version FROM schema_migrations;

-- name: record
INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, now());
