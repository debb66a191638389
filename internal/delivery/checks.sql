-- name: unresolved_rows
-- Per plan, the job rows whose newest state is unresolved (a person must settle them with
-- syncer job resolve), in the job journal attached read-only as "journal".
SELECT plan_id, count(*)::BIGINT
FROM (SELECT plan_id, action_id, arg_max(state, id) AS state FROM journal.job_actions GROUP BY plan_id, action_id)
WHERE state = 'unresolved'
GROUP BY plan_id
ORDER BY plan_id;
