-- Journal statements. Positional parameters (?) are bound by journal.go, plan.go and apply.go.

-- name: insert_plan
INSERT INTO job_plans (id, kind, account, plan_hash, input_file, input_sha256, actions, created_at, created_by, host,
                       warehouse_synced_at, again, skipped_lines)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?::JSON);

-- name: insert_plan_action
INSERT INTO job_plan_actions (plan_id, seq, line, action_id, target, change, request, current_values, allow_repeat)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?);

-- name: plan_by_id
SELECT id, kind, account, plan_hash, coalesce(input_file, ''), coalesce(input_sha256, ''), created_at,
       coalesce(created_by, ''), coalesce(host, ''), warehouse_synced_at, approved_at, coalesce(approved_by, ''),
       coalesce(again, false), coalesce(skipped_lines::VARCHAR, '[]'),
       (SELECT coalesce(min(j.id), 0) FROM job_actions j WHERE j.plan_id = job_plans.id)
FROM job_plans WHERE id = ?;

-- name: plan_id_by_hash
SELECT id FROM job_plans WHERE plan_hash = ?;

-- name: plan_actions
SELECT a.seq, a.line, a.action_id, coalesce(a.target, ''), coalesce(a.change, ''), a.request::VARCHAR,
       coalesce(a.current_values::VARCHAR, '{}'), coalesce(s.state, 'planned'), coalesce(s.detail::VARCHAR, '{}'),
       coalesce(s.error, ''), coalesce(s.sends, 0), coalesce(a.allow_repeat, false)
FROM job_plan_actions a
LEFT JOIN job_action_state s ON s.plan_id = a.plan_id AND s.action_id = a.action_id
WHERE a.plan_id = ?
ORDER BY a.seq;

-- name: approve_plan
UPDATE job_plans SET approved_at = ?, approved_by = ? WHERE id = ?;

-- name: list_plans
-- Rows per state as people count them (Counts in plan.go): planned = planned or not_applied (still to send),
-- sent = sent or unknown (outcome to be read by the next apply).
SELECT p.id, p.kind, p.account, p.created_at, coalesce(p.created_by, ''), p.approved_at IS NOT NULL, p.actions,
       count(s.state) FILTER (WHERE s.state IN ('planned', 'not_applied')),
       count(s.state) FILTER (WHERE s.state = 'held'),
       count(s.state) FILTER (WHERE s.state IN ('sent', 'unknown')),
       count(s.state) FILTER (WHERE s.state = 'succeeded'),
       count(s.state) FILTER (WHERE s.state = 'failed'),
       count(s.state) FILTER (WHERE s.state = 'unresolved'),
       coalesce(json_array_length(any_value(p.skipped_lines)), 0)
FROM job_plans p
LEFT JOIN job_action_state s ON s.plan_id = p.id
GROUP BY p.id, p.kind, p.account, p.created_at, p.created_by, p.approved_at, p.actions
ORDER BY p.created_at DESC;

-- name: approved_open_plans
-- Approved plans of an account with at least one action not yet succeeded or failed, oldest first.
SELECT p.id
FROM job_plans p
JOIN job_plan_actions a ON a.plan_id = p.id
LEFT JOIN job_action_state s ON s.plan_id = a.plan_id AND s.action_id = a.action_id
WHERE p.account = ? AND p.approved_at IS NOT NULL AND coalesce(s.state, 'planned') NOT IN ('succeeded', 'failed', 'held')
GROUP BY p.id, p.created_at
ORDER BY p.created_at;

-- name: insert_run
INSERT INTO job_runs (id, plan_id, plan_hash, kind, account, base_url, started_at, run_by, host, pid, status)
SELECT coalesce(max(id), 0) + 1, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'running' FROM job_runs
RETURNING id;

-- name: finish_run
UPDATE job_runs
SET finished_at = ?, status = ?, sent = ?, succeeded = ?, failed = ?, unresolved = ?, held = ?, error = ?
WHERE id = ?;

-- name: insert_transition
INSERT INTO job_actions (plan_id, action_id, seq, run_id, state, recorded_at, server_at, detail, error)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?);

-- name: insert_balance
INSERT INTO credit_balance_reports (account, customer_id, product_id, balance, reported_at, job_run_id, action_id)
VALUES (?, ?, ?, ?, ?, ?, ?);

-- name: last_send
-- When the action was last journaled as sent, by billsync's clock, and the service's Date known then;
-- and when the transition after it (the answer, or its absence) was journaled: the send happened between
-- the two. NULL when nothing followed it.
SELECT s.at, s.server, (SELECT min(n.recorded_at) FROM job_actions n
                        WHERE n.plan_id = $1 AND n.action_id = $2 AND n.id > s.id)
FROM (SELECT arg_max(recorded_at, id) AS at, arg_max(server_at, id) AS server, max(id) AS id
      FROM job_actions WHERE plan_id = $1 AND action_id = $2 AND state = 'sent') s;

-- name: claimed_ids
-- Records (ledger entries, invoices) already attributed to an action of this account and kind.
SELECT DISTINCT j.detail->>'$.claimed'
FROM job_actions j JOIN job_plans p ON p.id = j.plan_id
WHERE p.account = ? AND p.kind = ? AND (j.detail->>'$.claimed') IS NOT NULL;

-- name: other_topups_since
-- Top-ups of the same customer, product and amount that other actions of this account sent (and saw
-- succeed) at or after a time, by billsync's clock: each accounts for one matching ledger entry.
SELECT count(DISTINCT (s.plan_id, s.action_id))
FROM job_actions s
JOIN job_plans p ON p.id = s.plan_id
JOIN job_plan_actions a ON a.plan_id = s.plan_id AND a.action_id = s.action_id
JOIN job_action_state st ON st.plan_id = s.plan_id AND st.action_id = s.action_id
WHERE p.account = ? AND p.kind = 'credit-topup' AND s.state = 'sent'
  AND st.state = 'succeeded' AND (st.detail->>'$.claimed') IS NULL
  AND NOT (s.plan_id = ? AND s.action_id = ?)
  AND (a.request->>'$.customerId') = ? AND (a.request->>'$.productId') = ? AND (a.request->>'$.amount') = ?
  AND s.recorded_at >= ?;

-- name: credit_sends
-- Every add-credit action billsync sent (whatever its outcome: succeeded, failed after a send,
-- unknown or settled by hand), per account and customer, at the latest time recorded for it on
-- either clock: the sync reads these customers' credit history again (fetch, CreditHints).
SELECT p.account, a.request->>'$.customerId' AS customer_id,
       max(greatest(s.recorded_at, coalesce(s.server_at, s.recorded_at))) AS at
FROM job_plans p
JOIN job_plan_actions a ON a.plan_id = p.id
JOIN job_actions s ON s.plan_id = a.plan_id AND s.action_id = a.action_id
WHERE p.kind = ? AND coalesce(a.request->>'$.customerId', '') <> ''
  AND a.action_id IN (SELECT action_id FROM job_actions WHERE state = 'sent')
GROUP BY ALL
ORDER BY 1, 2;

-- name: insert_approval
INSERT INTO job_approvals (plan_id, approved_at, approved_by, host, planned_by, self_approved, account, base_url,
                           production, summary)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?);

-- name: plan_approvals
-- The plan's approvals with their targets, oldest first; none for a plan approved before approvals recorded one.
SELECT approved_at, approved_by, coalesce(host, ''), self_approved, account, base_url, production
FROM job_approvals WHERE plan_id = ?
ORDER BY approved_at, rowid;

-- name: plan_runs
-- The runs of one plan, numbered 1, 2, 3 within the plan; id is the journal-wide run id.
SELECT id, row_number() OVER (ORDER BY id) AS n, started_at, finished_at, coalesce(run_by, ''), coalesce(host, ''),
       coalesce(base_url, ''), status, coalesce(sent, 0), coalesce(error, '')
FROM job_runs WHERE plan_id = ?
ORDER BY id;

-- name: plan_resolutions
-- The rows of one plan a person settled by hand (syncer job resolve), in order.
SELECT seq, recorded_at, state, coalesce(detail->>'$.resolvedBy', ''), coalesce(detail->>'$.resolvedOn', ''),
       coalesce(detail->>'$.why', '')
FROM job_actions
WHERE plan_id = ? AND run_id IS NULL AND (detail->>'$.resolvedBy') IS NOT NULL
ORDER BY id;
-- name: repeat_candidates
-- Rows of the account's other plans of a kind that billsync sent and that succeeded or may have been applied
-- (sent, unknown, unresolved), last sent at or after a time: a row with the same content repeats them.
-- sent_id orders the sends within the journal whatever the clocks say. answered_at is the transition
-- journaled after the send's answer (NULL when none was: the send is only known to be after sent_at);
-- balance the balance the service reported in that answer, when it did (credit top-ups).
SELECT a.plan_id, a.seq, a.line, coalesce(p.input_file, ''), a.request::VARCHAR, s.state, x.sent_at, x.sent_id,
       (SELECT min(n.recorded_at) FROM job_actions n
        WHERE n.plan_id = a.plan_id AND n.action_id = a.action_id AND n.id > x.sent_id) AS answered_at,
       coalesce(s.detail->>'$.balance', '') AS balance
FROM job_plan_actions a
JOIN job_plans p ON p.id = a.plan_id
JOIN job_action_state s ON s.plan_id = a.plan_id AND s.action_id = a.action_id
JOIN (SELECT plan_id, action_id, max(recorded_at) AS sent_at, max(id) AS sent_id
      FROM job_actions WHERE state = 'sent' GROUP BY plan_id, action_id) x
  ON x.plan_id = a.plan_id AND x.action_id = a.action_id
WHERE p.account = ? AND p.kind = ? AND a.plan_id <> ?
  AND s.state IN ('succeeded', 'sent', 'unknown', 'unresolved') AND x.sent_at >= ?
ORDER BY x.sent_id;
