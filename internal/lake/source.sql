-- The lake's reads of the published warehouse that are not generated from the declarations
-- (those are in source.go: a table's digest and rows, per account).

-- name: last_run
-- The account's newest finished run: the state of the file a commit holds (billsync.run).
SELECT max(id) FROM sync_runs WHERE account = $1 AND status IN ('succeeded', 'partial');
