-- Merge steps shared by the entities. __TABLE__ is replaced by the entity's
-- constant table name when the package loads (record_changes names it too); an
-- entity's own file can override a section. The one-row temp table `merge_ctx`
-- holds account, run_id and observed_at.
--
-- A merge takes one of four paths (loader.go picks it):
--   direct      a first load (below) of a list without child tables whose records are all
--               valid and whose ids are new: one INSERT straight from the staged records;
--   first load  the account's first sync of the table, and none of the staged ids is
--               stored yet: parse everything, plain INSERT;
--   list        parse only records whose raw JSON differs from the stored one,
--               touch the seen columns of the identical ones;
--   detail      (product and payment-request details) their own classify.

-- name: staged
-- Staged rows as the merge reads them. Records come from decoded pages and are
-- valid JSON, so they are parsed without TRY (which doubles the cost); when a
-- statement still fails on bad JSON the loader sets bs_checked and starts over,
-- and unreadable records become NULL, reported as "not a JSON object".
CREATE OR REPLACE TEMP VIEW staged AS
SELECT seq, page, idx,
       CASE WHEN getvariable('bs_checked') AND NOT json_valid(raw) THEN NULL ELSE raw END AS raw,
       -- staged as two UBIGINT halves, the Appender's cheap type (loader.go, rawHash)
       (raw_hash_hi::UHUGEINT << 64) | raw_hash_lo AS raw_hash
FROM stage;

-- name: first_path
-- The first-load path fits while the account's first sync of the entity is
-- still under way, batch after batch: no stored row of the account comes from
-- an earlier run (so no `_created` history is owed). Nothing is parsed here:
-- whether a staged id is stored already is asked of `projected` (first_overlap).
SELECT NOT EXISTS (SELECT 1 FROM __TABLE__ t, merge_ctx c
                   WHERE t.account = c.account AND t.first_seen_run <> c.run_id);

-- name: stored_before
-- Whether the table holds rows of the account ($1) from a run before this one
-- ($2): then the list's merges take the list path, and its batches are larger
-- (sink.go, listBatch).
SELECT EXISTS (SELECT 1 FROM __TABLE__ WHERE account = $1 AND first_seen_run <> $2);

-- name: first_overlap
-- After the first-load projection: does an id of this batch already have a row
-- (an earlier batch of this run read it, the list having moved under the pager)?
-- Then the batch takes the list path, which compares and replaces. The ids come
-- from `projected`, so each record's JSON is parsed once on this path.
SELECT EXISTS (SELECT 1 FROM __TABLE__ t, merge_ctx c
               WHERE t.account = c.account AND t.id IN (SELECT id FROM projected));

-- name: parse_all
CREATE OR REPLACE TEMP VIEW parse_input AS SELECT * FROM staged;

-- name: keys
-- One cheap pass (the id only) decides what each staged record is, before the
-- expensive parse: a record whose raw JSON equals the stored one is neither
-- parsed nor validated again (it passed when stored). Equal is equal raw_hash,
-- 128 bits of the SHA-256 of the exact bytes (loader.go, rawHash): the stored
-- side is read without its raw JSON, which a join on raw held whole in its
-- hash table. merge_state has one row per id, the later fetch of a record
-- winning (stage order = fetch order).
CREATE OR REPLACE TEMP TABLE keys AS
SELECT s.seq, s.id, t.id IS NOT NULL AS stored,
       coalesce(t.raw_hash = s.raw_hash, false) AS identical,
       coalesce(t.deleted_upstream_at IS NOT NULL, false) AS was_deleted
FROM (SELECT seq, bs_blank(json_extract_string(raw, '$.id')) AS id, raw_hash FROM staged) s
LEFT JOIN (SELECT t.id, t.raw_hash, t.deleted_upstream_at FROM __TABLE__ t, merge_ctx c WHERE t.account = c.account) t
       ON t.id = s.id;
SET VARIABLE bs_has_duplicates = (SELECT count(id) <> count(DISTINCT id) FROM keys);
CREATE OR REPLACE TEMP TABLE merge_state AS
WITH latest AS (
    SELECT * FROM keys WHERE id IS NOT NULL AND NOT getvariable('bs_has_duplicates')
    UNION ALL
    SELECT * FROM keys WHERE id IS NOT NULL AND getvariable('bs_has_duplicates')
    QUALIFY row_number() OVER (PARTITION BY id ORDER BY seq DESC) = 1
)
SELECT id, seq,
       CASE WHEN NOT stored THEN 'new' WHEN identical THEN 'same' ELSE 'changed' END AS state,
       was_deleted,
       -- derived tables are rebuilt only from parents that are new, changed or restored
       NOT identical OR was_deleted AS derive
FROM latest;
-- Records without an id are parsed too, so validation can name them.
CREATE OR REPLACE TEMP VIEW parse_input AS
SELECT * FROM staged
WHERE seq IN (SELECT seq FROM keys WHERE NOT identical OR was_deleted OR id IS NULL);

-- name: dedupe
-- The later fetch of a record wins. Without duplicates (the usual case)
-- incoming is just a view of projected.
SET VARIABLE bs_has_duplicates = (SELECT count(*) <> count(DISTINCT id) FROM projected);
CREATE OR REPLACE TEMP VIEW incoming AS
SELECT * EXCLUDE (x_problems) FROM projected WHERE NOT getvariable('bs_has_duplicates')
UNION ALL BY NAME
SELECT * EXCLUDE (x_problems) FROM projected WHERE getvariable('bs_has_duplicates')
QUALIFY row_number() OVER (PARTITION BY id ORDER BY x_seq DESC) = 1;

-- name: dedupe_keyed
-- merge_state already chose the record that wins for each id.
CREATE OR REPLACE TEMP VIEW incoming AS
SELECT * EXCLUDE (x_problems) FROM projected WHERE x_seq IN (SELECT seq FROM merge_state);

-- name: classify_first
CREATE OR REPLACE TEMP TABLE merge_state AS
SELECT id, x_seq AS seq, 'new' AS state, false AS was_deleted, true AS derive FROM incoming;

-- name: classify
-- opt-out: the list path classifies its records in `keys`

-- name: counts_first
-- The first load of an entity without derived tables: every incoming record is new, and
-- nothing reads merge_state, so classify_first is skipped and the counts come from incoming.
SELECT count(*) AS inserted, 0 AS updated, 0 AS unchanged, 0 AS restored FROM incoming;

-- An entity's `changes` section (in its own file) compares typed columns of
-- `incoming` with the stored row. On the list path incoming holds only records
-- whose raw JSON differs from the stored one (and restored ones, whose fields
-- are equal), so it never reads the stored raw: that would decompress the
-- whole table's raw column on every merge of a nightly sync.

-- name: counts
SELECT count(*) FILTER (WHERE state = 'new') AS inserted,
       count(*) FILTER (WHERE state = 'changed') AS updated,
       count(*) FILTER (WHERE state = 'same' AND NOT was_deleted) AS unchanged,
       count(*) FILTER (WHERE was_deleted) AS restored
FROM merge_state;

-- name: lifecycle
-- `_created` means "appeared since the previous sync": the account's first
-- sync of the entity (no row from an earlier run) writes none, first_seen_at
-- says when billsync first saw those records.
INSERT INTO record_changes
SELECT c.account, '__TABLE__', m.id, CASE WHEN m.state = 'new' THEN '_created' ELSE '_restored' END,
       NULL, NULL, c.observed_at, c.run_id
FROM merge_state m, merge_ctx c
WHERE m.was_deleted
   OR (m.state = 'new' AND EXISTS (SELECT 1 FROM __TABLE__ t, merge_ctx c2
                                   WHERE t.account = c2.account AND t.first_seen_run <> c2.run_id));

-- name: insert_direct
-- The first load of a list without child tables, in one pass: parsed, checked and inserted by one
-- statement through the entity's projection (its `project` query, put in as a subquery when the
-- package loads), so no batch-sized `projected` table is written, spilled and copied. A record
-- with a problem stops the statement (error() runs only for such rows); the loader then rolls
-- back and takes the steps that name every problem. Before it commits, the loader checks that no
-- id now has two rows (direct.go, with the three sections below).
INSERT INTO __TABLE__ BY NAME
SELECT COLUMNS(c -> NOT starts_with(c, 'x_')),
       last_seen_run AS first_seen_run, last_seen_at AS first_seen_at
FROM (__PROJECTION__) AS projected_direct
WHERE CASE WHEN len(x_problems) = 0 THEN true ELSE error('billsync: a staged record has problems') END;

-- name: direct_rowid
-- Before insert_direct, in its transaction: the largest row id the table holds. Every row with a
-- larger one afterwards is one the insert added.
SELECT coalesce(max(rowid), -1) FROM __TABLE__;

-- name: direct_batch_ids
-- After insert_direct: the hashes of the ids of the rows with a row id above $1 (direct_rowid),
-- which the loader counts against the rows inserted.
SELECT hash(id) FROM __TABLE__ WHERE rowid > $1;

-- name: direct_ids
-- The hashes of the account's stored ids, the first time a run's direct path needs them ($1 the
-- account): the same hash() as direct_batch_ids.
SELECT hash(id) FROM __TABLE__ WHERE account = $1;

-- name: insert_first
INSERT INTO __TABLE__ BY NAME
SELECT COLUMNS(c -> NOT starts_with(c, 'x_')),
       last_seen_run AS first_seen_run, last_seen_at AS first_seen_at
FROM incoming;

-- name: upsert
-- New records are inserted with their first_seen columns. Changed and restored
-- ones are replaced (delete + append) rather than updated in place: updating
-- rows scattered over the table makes DuckDB rewrite every column of every
-- row group they touch, raw included (measured: 4 s of commit for 1% of 1M).
-- The replacement is the stored row updated BY NAME, so columns the incoming
-- rows do not carry (first_seen_*, detail columns filled by another entity)
-- keep their values. Identical records were not parsed: only their two narrow
-- seen columns are updated.
INSERT INTO __TABLE__ BY NAME
SELECT COLUMNS(c -> NOT starts_with(c, 'x_')),
       last_seen_run AS first_seen_run, last_seen_at AS first_seen_at
FROM incoming
WHERE x_seq IN (SELECT seq FROM merge_state WHERE state = 'new');
CREATE OR REPLACE TEMP TABLE replaced AS
SELECT t.* FROM __TABLE__ t, merge_ctx c
WHERE t.account = c.account AND t.id IN (SELECT id FROM merge_state WHERE state <> 'new' AND derive);
MERGE INTO replaced t
USING (SELECT COLUMNS(c -> NOT starts_with(c, 'x_')) FROM incoming
       WHERE x_seq IN (SELECT seq FROM merge_state WHERE state <> 'new')) s
ON t.account = s.account AND t.id = s.id
WHEN MATCHED THEN UPDATE BY NAME;
DELETE FROM __TABLE__ t USING merge_ctx c
WHERE t.account = c.account AND t.id IN (SELECT id FROM replaced);
INSERT INTO __TABLE__ SELECT * FROM replaced;
UPDATE __TABLE__ t SET last_seen_run = c.run_id, last_seen_at = c.observed_at
FROM merge_state m, merge_ctx c
WHERE t.account = c.account AND t.id = m.id AND m.state = 'same' AND NOT m.was_deleted;

-- name: deleted
-- Only after a full list: rows of this account that no merge of this run saw.
INSERT INTO record_changes
SELECT t.account, '__TABLE__', t.id, '_deleted', NULL, NULL, c.observed_at, c.run_id
FROM __TABLE__ t, merge_ctx c
WHERE t.account = c.account AND t.deleted_upstream_at IS NULL AND t.last_seen_run <> c.run_id;
UPDATE __TABLE__ t SET deleted_upstream_at = c.observed_at
FROM merge_ctx c
WHERE t.account = c.account AND t.deleted_upstream_at IS NULL AND t.last_seen_run <> c.run_id;

-- name: seen_in_run
-- Rows of an account that this run's merges saw: with several merges per list, the number of
-- distinct records the list delivered, which fetch compares with the server's count.
SELECT count(*) FROM __TABLE__ WHERE account = ? AND last_seen_run = ?;
