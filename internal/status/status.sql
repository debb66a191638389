-- What syncer status reads (status.go). Each source is attached read-only under its own name:
-- wh (the published warehouse), jobs (the job journal), dl (the delivery journal). A section
-- reads one source, so a source that is missing or busy costs only its own part of the view.

-- name: last_runs
-- Per account, the newest run the published warehouse holds (a failed run publishes nothing:
-- the syncer's state file has those).
SELECT account, arg_max(id, id), arg_max(status, id), arg_max(started_at, id), arg_max(finished_at, id),
       arg_max(coalesce(records, 0), id), arg_max(coalesce(error, ''), id)
FROM wh.sync_runs
GROUP BY account
ORDER BY account;

-- name: freshness
-- Per account and entity, when a complete read of it last finished and how many records it had.
WITH done AS (
    SELECT r.account, s.entity, s.run_id, max(s.finished_at) AS finished_at, sum(s.records) AS records
    FROM wh.sync_streams s JOIN wh.sync_runs r ON r.id = s.run_id
    WHERE s.complete
    GROUP BY r.account, s.entity, s.run_id
)
SELECT account, entity, max(finished_at), arg_max(records, finished_at)
FROM done
GROUP BY account, entity
ORDER BY account, entity;

-- name: job_waiting
-- Per plan, the rows that wait for a person: unresolved (syncer job resolve), sent or unknown
-- (the next apply reads the service to settle them), still to send on a plan nobody approved.
WITH s AS (
    SELECT plan_id, action_id, arg_max(state, id) AS state FROM jobs.job_actions GROUP BY plan_id, action_id
)
SELECT p.id, p.kind, p.account, p.created_at, coalesce(p.created_by, ''), p.approved_at IS NOT NULL,
       count(*) FILTER (WHERE s.state = 'unresolved'),
       count(*) FILTER (WHERE s.state IN ('sent', 'unknown')),
       count(*) FILTER (WHERE s.state IN ('planned', 'not_applied'))
FROM jobs.job_plans p JOIN s ON s.plan_id = p.id
GROUP BY p.id, p.kind, p.account, p.created_at, p.created_by, p.approved_at
HAVING count(*) FILTER (WHERE s.state IN ('unresolved', 'sent', 'unknown')) > 0
    OR (NOT (p.approved_at IS NOT NULL) AND count(*) FILTER (WHERE s.state IN ('planned', 'not_applied')) > 0
        AND p.created_at > ?::TIMESTAMPTZ)
ORDER BY p.created_at;

-- name: deliveries_last
-- Per delivery, its newest journal row.
SELECT name, arg_max(as_of::VARCHAR, id), arg_max(kind, id), arg_max(state, id), arg_max(started_at, id),
       arg_max(coalesce(error, ''), id), arg_max(coalesce(stale, ''), id)
FROM dl.deliveries
WHERE kind <> 'test' -- a test (report deliver -test-to) is nobody's delivery
GROUP BY name
ORDER BY name;

-- name: alerts_active
-- The problems the daemon's alerts see as present, with when each started.
SELECT key, what, coalesce(detail, ''), changed_at
FROM (SELECT key, arg_max(active, changed_at) AS active, arg_max(what, changed_at) AS what,
             arg_max(detail, changed_at) AS detail, max(changed_at) AS changed_at
      FROM dl.alert_states GROUP BY key)
WHERE active
ORDER BY key;
