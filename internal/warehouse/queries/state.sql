-- Sync state statements. Positional parameters (?) are bound by state.go.

-- name: unfinished_runs
SELECT count(*) FROM sync_runs WHERE status = 'running';

-- name: find_unfinished_run
SELECT id, clock_source, clock_offset_ms, failure FROM sync_runs WHERE account = ? AND status = 'running' ORDER BY id DESC LIMIT 1;

-- name: set_run_clock
UPDATE sync_runs SET clock_source = ?, clock_offset_ms = ? WHERE id = ?;

-- name: set_run_failure
UPDATE sync_runs SET failure = ? WHERE id = ?;

-- name: get_run_failure
SELECT failure FROM sync_runs WHERE id = ?;

-- name: future_credit_reads
-- Credit reads stored at a time after the latest this machine's clock allows: a run that took an
-- ahead service clock for its time. Forgotten, the customers are read again in full.
DELETE FROM credit_fetch_state WHERE account = ? AND last_fetched_at > ?;

-- name: future_cursors
-- Webhook cursors (epoch milliseconds) after the latest this machine's clock allows.
DELETE FROM sync_cursors WHERE account = ? AND stream = 'webhook_deliveries'
    AND TRY_CAST(value AS BIGINT) > ?;

-- name: ahead_clock_seen
-- The latest the service's clock read in an earlier run of the account ($1) that stored records it
-- dated ahead of this machine's clock (flagged service_clock): when the run finished (or started),
-- moved by how far the service's clock was ahead then. Those records keep their dates after the
-- service's clock is set right, and a change to one (an invoice paid) carries its createdAt again.
SELECT max(coalesce(r.finished_at, r.started_at) + to_milliseconds(r.clock_offset_ms))
FROM sync_runs r
WHERE r.account = $1 AND r.clock_offset_ms > 0
  AND EXISTS (SELECT 1 FROM data_quality_flags f WHERE f.account = $1 AND f.run_id = r.id AND f.flag = 'service_clock');

-- name: insert_run
INSERT INTO sync_runs (id, account, status, started_at)
SELECT coalesce(max(id), 0) + 1, ?, 'running', ? FROM sync_runs
RETURNING id;

-- name: finish_run
UPDATE sync_runs
SET status = ?, finished_at = ?, records = ?, requests = ?, retries = ?, error = ?
WHERE id = ?;

-- name: stream_done
SELECT count(*) > 0 FROM sync_streams WHERE run_id = ? AND stream = ? AND complete;

-- name: delete_stream
DELETE FROM sync_streams WHERE run_id = ? AND stream = ?;

-- name: insert_stream
INSERT INTO sync_streams (run_id, stream, entity, started_at, finished_at, pages, records, requests, retries, complete, error)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?);

-- name: get_cursor
SELECT value FROM sync_cursors WHERE account = ? AND stream = ?;

-- name: delete_cursor
DELETE FROM sync_cursors WHERE account = ? AND stream = ?;

-- name: insert_cursor
INSERT INTO sync_cursors (account, stream, value, run_id, updated_at) VALUES (?, ?, ?, ?, now());

-- name: delete_conflicts
-- A stream that is paged again in a resumed run records its conflicts anew.
DELETE FROM data_quality_conflicts WHERE account = ? AND run_id = ? AND stream = ?;

-- name: insert_conflict
INSERT INTO data_quality_conflicts (account, entity, stream, id, run_id, observed_at, path,
    first_page, first_item, first_raw, second_page, second_item, second_raw)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?);

-- name: newest_created
-- The latest createdAt (as the merge parsed it) among the rows of an account this run saw: the
-- webhook cursor. __TABLE__ is the entity's constant table name.
SELECT max(created_at) FROM __TABLE__ WHERE account = ? AND last_seen_run = ?;

-- name: last_read
-- Records the account's last complete read of a stream returned, in a finished run.
SELECT s.records FROM sync_streams s JOIN sync_runs r ON r.id = s.run_id
WHERE r.account = ? AND s.stream = ? AND s.complete AND r.status IN ('succeeded', 'partial')
ORDER BY s.run_id DESC LIMIT 1;

-- name: insert_flag
-- A record flagged for data quality; a resumed attempt that reads the page again adds nothing.
INSERT INTO data_quality_flags (account, run_id, observed_at, entity, record_id, flag, field, detail, path, page, item)
SELECT $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11
WHERE NOT EXISTS (SELECT 1 FROM data_quality_flags f
                  WHERE f.account = $1 AND f.run_id = $2 AND f.entity = $4 AND f.record_id IS NOT DISTINCT FROM $5
                    AND f.flag = $6 AND f.field IS NOT DISTINCT FROM $7);

-- name: flag_service_clock
-- The records of an account this run stored with a time (__COL__, its JSON name $6) after $8,
-- this machine's clock at the run plus the skew bound: dated by a service whose clock ran ahead.
-- __TABLE__ and __COL__ are an entity's constant table and time column.
INSERT INTO data_quality_flags (account, run_id, observed_at, entity, record_id, flag, field, detail)
SELECT t.account, $2, $3, $4, t.id, $5, $6,
       $6 || ' ' || strftime(timezone('UTC', t.__COL__), '%Y-%m-%d %H:%M UTC') || ' is after this machine''s clock (' ||
       strftime(timezone('UTC', $3::TIMESTAMPTZ), '%Y-%m-%d %H:%M UTC') || '): ' || $7
FROM __TABLE__ t
WHERE t.account = $1 AND t.last_seen_run = $2 AND t.__COL__ > $8
  AND NOT EXISTS (SELECT 1 FROM data_quality_flags f WHERE f.account = $1 AND f.run_id = $2 AND f.entity = $4
                  AND f.record_id = t.id AND f.flag = $5 AND f.field = $6);
