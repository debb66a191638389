-- When a scheduler (the syncer daemon) started against this journal. The first start bounds
-- what is owed: an occurrence scheduled before it belongs to no install and is not sent late.
CREATE TABLE daemon_starts (
    started_at TIMESTAMPTZ NOT NULL
);
