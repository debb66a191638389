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

-- name: counts
SELECT count(*) FILTER (WHERE t.id IS NULL) AS inserted,
       count(*) FILTER (WHERE t.id IS NOT NULL AND t.raw IS DISTINCT FROM s.raw) AS updated,
       count(*) FILTER (WHERE t.id IS NOT NULL AND t.raw IS NOT DISTINCT FROM s.raw
                        AND t.deleted_upstream_at IS NULL) AS unchanged,
       count(*) FILTER (WHERE t.deleted_upstream_at IS NOT NULL) AS restored
FROM incoming s LEFT JOIN __TABLE__ t ON t.account = s.account AND t.id = s.id;

-- name: lifecycle
INSERT INTO record_changes
SELECT s.account, '__ENTITY__', s.id,
       CASE WHEN t.id IS NULL THEN '_created' ELSE '_restored' END,
       NULL, NULL, s.last_seen_at, s.last_seen_run
FROM incoming s LEFT JOIN __TABLE__ t ON t.account = s.account AND t.id = s.id
WHERE t.id IS NULL OR t.deleted_upstream_at IS NOT NULL;

-- name: upsert
-- BY NAME: columns the incoming rows do not carry (first_seen_*, detail
-- columns filled by another entity) keep their values on update. A record
-- whose raw JSON did not change only gets its seen columns touched.
MERGE INTO __TABLE__ t
USING (SELECT COLUMNS(c -> NOT starts_with(c, 'x_')) FROM incoming) s
ON t.account = s.account AND t.id = s.id
WHEN MATCHED AND t.raw IS NOT DISTINCT FROM s.raw THEN
    UPDATE SET last_seen_run = s.last_seen_run, last_seen_at = s.last_seen_at, deleted_upstream_at = NULL
WHEN MATCHED THEN UPDATE BY NAME
WHEN NOT MATCHED THEN INSERT BY NAME;
UPDATE __TABLE__ SET first_seen_run = last_seen_run, first_seen_at = last_seen_at
WHERE first_seen_run IS NULL;

-- name: deleted
-- Only after a full list: rows of this account that no merge of this run saw.
INSERT INTO record_changes
SELECT t.account, '__ENTITY__', t.id, '_deleted', NULL, NULL, c.observed_at, c.run_id
FROM __TABLE__ t, merge_ctx c
WHERE t.account = c.account AND t.deleted_upstream_at IS NULL AND t.last_seen_run <> c.run_id;
UPDATE __TABLE__ t SET deleted_upstream_at = c.observed_at
FROM merge_ctx c
WHERE t.account = c.account AND t.deleted_upstream_at IS NULL AND t.last_seen_run <> c.run_id;
