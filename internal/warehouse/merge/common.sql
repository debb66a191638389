-- Merge steps shared by the entities. __TABLE__ and __ENTITY__ are replaced by
-- the entity's constant table and entity names when the package loads; an
-- entity's own file can override a section. Every step reads the deduplicated
-- temp table `incoming` (target columns plus x_* helper columns) and the
-- one-row temp table `merge_ctx` (account, run_id, observed_at).

-- name: dedupe
-- The later fetch of a record wins (stage order = fetch order). Without
-- duplicates (the usual case) incoming is just a view of projected.
SET VARIABLE bs_has_duplicates = (SELECT count(*) <> count(DISTINCT id) FROM projected);
CREATE OR REPLACE TEMP VIEW incoming AS
SELECT * EXCLUDE (x_problems) FROM projected WHERE NOT getvariable('bs_has_duplicates')
UNION ALL BY NAME
SELECT * EXCLUDE (x_problems) FROM projected WHERE getvariable('bs_has_duplicates')
QUALIFY row_number() OVER (PARTITION BY id ORDER BY x_seq DESC) = 1;

-- name: classify
-- One join with the table decides what each incoming record is; the later
-- steps read this instead of joining again.
CREATE OR REPLACE TEMP TABLE merge_state AS
SELECT s.id,
       CASE WHEN t.id IS NULL THEN 'new'
            WHEN t.raw IS DISTINCT FROM s.raw THEN 'changed'
            ELSE 'same' END AS state,
       t.id IS NOT NULL AND t.deleted_upstream_at IS NOT NULL AS was_deleted,
       -- derived tables are rebuilt only from parents that are new, changed or restored
       t.id IS NULL OR t.raw IS DISTINCT FROM s.raw OR t.deleted_upstream_at IS NOT NULL AS derive
FROM incoming s LEFT JOIN __TABLE__ t ON t.account = s.account AND t.id = s.id;

-- name: counts
SELECT count(*) FILTER (WHERE state = 'new') AS inserted,
       count(*) FILTER (WHERE state = 'changed') AS updated,
       count(*) FILTER (WHERE state = 'same' AND NOT was_deleted) AS unchanged,
       count(*) FILTER (WHERE was_deleted) AS restored
FROM merge_state;

-- name: lifecycle
INSERT INTO record_changes
SELECT c.account, '__ENTITY__', m.id, CASE WHEN m.state = 'new' THEN '_created' ELSE '_restored' END,
       NULL, NULL, c.observed_at, c.run_id
FROM merge_state m, merge_ctx c
WHERE m.state = 'new' OR m.was_deleted;

-- name: upsert
-- New records are inserted with their first_seen columns; known ones are
-- updated BY NAME, so columns the incoming rows do not carry (first_seen_*,
-- detail columns filled by another entity) keep their values. A record whose
-- raw JSON did not change only gets its seen columns touched.
INSERT INTO __TABLE__ BY NAME
SELECT COLUMNS(c -> NOT starts_with(c, 'x_')),
       last_seen_run AS first_seen_run, last_seen_at AS first_seen_at
FROM incoming
WHERE id IN (SELECT id FROM merge_state WHERE state = 'new');
MERGE INTO __TABLE__ t
USING (SELECT COLUMNS(c -> NOT starts_with(c, 'x_')) FROM incoming
       WHERE id IN (SELECT id FROM merge_state WHERE state <> 'new')) s
ON t.account = s.account AND t.id = s.id
WHEN MATCHED AND t.raw IS NOT DISTINCT FROM s.raw THEN
    UPDATE SET last_seen_run = s.last_seen_run, last_seen_at = s.last_seen_at, deleted_upstream_at = NULL
WHEN MATCHED THEN UPDATE BY NAME;

-- name: deleted
-- Only after a full list: rows of this account that no merge of this run saw.
INSERT INTO record_changes
SELECT t.account, '__ENTITY__', t.id, '_deleted', NULL, NULL, c.observed_at, c.run_id
FROM __TABLE__ t, merge_ctx c
WHERE t.account = c.account AND t.deleted_upstream_at IS NULL AND t.last_seen_run <> c.run_id;
UPDATE __TABLE__ t SET deleted_upstream_at = c.observed_at
FROM merge_ctx c
WHERE t.account = c.account AND t.deleted_upstream_at IS NULL AND t.last_seen_run <> c.run_id;
