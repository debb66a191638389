-- name: newest_runs
-- Per account, the newest sync run in the published warehouse: its id, status and end.
SELECT account, max(id), arg_max(status, id), arg_max(finished_at, id)
FROM sync_runs
WHERE ? = '' OR account = ?
GROUP BY account
ORDER BY account;
