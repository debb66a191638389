-- The reader's statements that are not generated from the lake tables' columns (read.go).

-- name: parquet_columns
-- The columns the data files of one table's snapshot hold (older files may lack a column the
-- table gained later; union_by_name reads them as null).
-- Formatted with the files, a quoted list literal (DESCRIBE takes no parameters).
SELECT column_name FROM (DESCRIBE SELECT * FROM read_parquet(%s, union_by_name = true));

-- name: warehouse_columns
-- The columns this billsync's warehouse table has, in order.
SELECT column_name FROM duckdb_columns() WHERE database_name = current_database() AND schema_name = 'main' AND table_name = $1
ORDER BY column_index;

-- name: shared_run_ids
-- Run ids more than one account's runs carry: each syncer numbers its own file's runs, and the
-- warehouse joins a run's streams to it by id alone (sync health), which several accounts'
-- runs under one id would mix.
SELECT count(*) FROM (SELECT id FROM sync_runs GROUP BY id HAVING count(DISTINCT account) > 1);
