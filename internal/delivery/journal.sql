-- name: states
-- A test (report deliver -test-to) went to a tester, not the recipients: it counts for nothing.
SELECT id, state, transport, message_id FROM deliveries WHERE name = ? AND as_of = ?::DATE AND kind <> 'test' ORDER BY id;

-- name: insert
INSERT INTO deliveries (name, as_of, kind, scheduled_at, late, stale, recipients, subject, message_id,
    transport, eml, sync_run, sync_finished_at, state, attempts, error, started_at)
VALUES (?, ?::DATE, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 0, ?, ?)
RETURNING id;

-- name: insert_file
INSERT INTO delivery_files (delivery_id, path, bytes, sha256, attached) VALUES (?, ?, ?, ?, ?);

-- name: attempt
UPDATE deliveries SET attempts = ?, error = ? WHERE id = ?;

-- name: finish
UPDATE deliveries SET state = ?, attempts = ?, error = ?, finished_at = ? WHERE id = ?;

-- name: interrupted
UPDATE deliveries SET state = 'unknown', error = ?, finished_at = ?
WHERE name = ? AND as_of = ?::DATE AND state = 'sending' AND kind <> 'test';

-- name: list
SELECT d.id, d.name, strftime(d.as_of, '%Y-%m-%d'), d.kind, d.late, coalesce(d.stale, ''), d.state, d.attempts,
       d.recipients, d.subject, d.message_id, d.transport, coalesce(d.eml, ''), coalesce(d.error, ''),
       d.started_at, d.finished_at,
       count(f.path) AS files, coalesce(sum(f.bytes), 0)::BIGINT AS bytes
FROM deliveries d LEFT JOIN delivery_files f ON f.delivery_id = d.id
WHERE ? = '' OR d.name = ?
GROUP BY ALL
ORDER BY d.id DESC
LIMIT ?;

-- name: files
SELECT path, bytes, sha256, attached FROM delivery_files WHERE delivery_id = ? ORDER BY path;

-- name: last_as_of
SELECT strftime(max(as_of), '%Y-%m-%d') FROM deliveries WHERE name = ? AND kind <> 'test';

-- name: alert_states
SELECT key, active FROM alert_states ORDER BY key;

-- name: alert_state_delete
DELETE FROM alert_states WHERE key = ?;

-- name: alert_state_insert
INSERT INTO alert_states (key, active, what, detail, changed_at) VALUES (?, ?, ?, ?, ?);

-- name: alert_insert
INSERT INTO alerts (key, kind, subject, body, recipients, observed_at, state, attempts)
VALUES (?, ?, ?, ?, ?, ?, 'pending', 0);

-- name: alert_event_seen
SELECT count(*) > 0 FROM alerts WHERE key = ? AND kind = 'event';

-- name: alerts_unsent
-- Messages not yet accepted by the server, oldest first; sending = a crash during the send.
SELECT id, subject, body, state FROM alerts WHERE state IN ('pending', 'sending') ORDER BY id;

-- name: alert_mark
UPDATE alerts SET state = ?, attempts = attempts + ?, error = ?, sent_at = ? WHERE id = ?;

-- name: first_start
SELECT min(started_at) FROM daemon_starts;

-- name: start_insert
INSERT INTO daemon_starts (started_at) VALUES (?);
