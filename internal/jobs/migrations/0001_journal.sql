-- The job journal: plans, runs and the append-only history of every action's state.
-- It lives in its own file beside the warehouse (never inside it: a sync replaces the published
-- warehouse by renaming a new build over it).

CREATE TABLE job_plans (
    id VARCHAR PRIMARY KEY,
    kind VARCHAR NOT NULL,
    account VARCHAR NOT NULL,
    plan_hash VARCHAR NOT NULL,      -- sha256 of kind, account and every action's request
    input_file VARCHAR,
    input_sha256 VARCHAR,
    actions INTEGER NOT NULL,
    created_at TIMESTAMPTZ NOT NULL,
    created_by VARCHAR,
    host VARCHAR,
    warehouse_synced_at TIMESTAMPTZ, -- the last sync the validation saw
    approved_at TIMESTAMPTZ,
    approved_by VARCHAR
);

CREATE TABLE job_plan_actions (
    plan_id VARCHAR NOT NULL,
    seq INTEGER NOT NULL,            -- 1-based position in the plan
    line INTEGER NOT NULL,           -- line of the input file
    action_id VARCHAR NOT NULL,      -- idempotency key: sha256(plan hash, seq, request)
    target VARCHAR,                  -- who or what the action touches, for people
    change VARCHAR,                  -- what will change, for people
    request JSON NOT NULL,           -- the fields that will be sent
    current_values JSON,             -- what the warehouse said at plan time
    PRIMARY KEY (plan_id, seq)
);

CREATE TABLE job_runs (
    id BIGINT PRIMARY KEY,
    plan_id VARCHAR NOT NULL,
    plan_hash VARCHAR NOT NULL,
    kind VARCHAR NOT NULL,
    account VARCHAR NOT NULL,
    base_url VARCHAR,
    started_at TIMESTAMPTZ NOT NULL,
    finished_at TIMESTAMPTZ,
    run_by VARCHAR,
    host VARCHAR,
    pid INTEGER,
    status VARCHAR NOT NULL,         -- running, completed, completed_with_failures, incomplete, aborted
    sent INTEGER,
    succeeded INTEGER,
    failed INTEGER,
    unresolved INTEGER,              -- actions left planned, not_applied or unknown
    error VARCHAR
);

-- One row per state transition; rows are only ever added.
CREATE SEQUENCE job_action_seq;
CREATE TABLE job_actions (
    id BIGINT DEFAULT nextval('job_action_seq') PRIMARY KEY, -- transition order
    plan_id VARCHAR NOT NULL,
    action_id VARCHAR NOT NULL,
    seq INTEGER NOT NULL,
    run_id BIGINT,                   -- NULL for the planned row
    state VARCHAR NOT NULL,          -- planned, sent, succeeded, failed, unknown, not_applied
    recorded_at TIMESTAMPTZ NOT NULL, -- local clock
    server_at TIMESTAMPTZ,           -- the service's clock (latest Date header), when known
    detail JSON,                     -- response summary or reconciliation evidence
    error VARCHAR
);

-- Balances the service reported in add-credit answers; read by the finance reports.
CREATE TABLE credit_balance_reports (
    account VARCHAR,
    customer_id VARCHAR,
    product_id VARCHAR,
    balance DECIMAL(20,4),
    reported_at TIMESTAMPTZ,
    job_run_id BIGINT,
    action_id VARCHAR
);

CREATE VIEW job_action_state AS
SELECT plan_id, action_id, seq,
       arg_max(state, id) AS state,
       max(recorded_at) AS recorded_at,
       arg_max(detail, id) AS detail,
       arg_max(error, id) AS error,
       count(*) FILTER (WHERE state = 'sent') AS sends
FROM job_actions
GROUP BY plan_id, action_id, seq;
