-- Four eyes: every approval with who gave it and the one target it was given for. The daemon sends an
-- approved plan only to that base URL with that production flag; an approval without a row here (made
-- before approvals recorded their target) sends nothing. A table of its own, not columns of job_plans,
-- so this migration applies before or after any other in whatever order they land.
CREATE TABLE job_approvals (
    plan_id VARCHAR NOT NULL,
    approved_at TIMESTAMPTZ NOT NULL,
    approved_by VARCHAR NOT NULL,    -- the approver's login
    host VARCHAR,
    planned_by VARCHAR,              -- job_plans.created_by at approval, for the record
    self_approved BOOLEAN NOT NULL,  -- the planner approved it (BILLSYNC_ALLOW_SELF_APPROVE=true)
    account VARCHAR NOT NULL,
    base_url VARCHAR NOT NULL,       -- the only service the daemon sends it to
    production BOOLEAN NOT NULL,     -- that service is production
    summary VARCHAR                  -- what the approver was shown
);
