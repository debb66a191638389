-- name: newest_runs
-- Per account, the newest sync run in the published warehouse: its id, status and end.
SELECT account, max(id), arg_max(status, id), arg_max(finished_at, id)
FROM sync_runs
WHERE ? = '' OR account = ?
GROUP BY account
ORDER BY account;

-- name: last_success
-- When every account last synced successfully (partial counts: it was published): the oldest
-- account's newest such run.
SELECT min(t) FROM (SELECT account, max(finished_at) AS t FROM sync_runs
                    WHERE status IN ('succeeded', 'partial') GROUP BY account);
