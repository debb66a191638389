-- changes_at(entity, cutoff[, field_1, field_2, account, lifecycle]): what record_changes says of
-- the records of one entity at the instant cutoff. One row per record with a change of field_1 or
-- field_2, or (unless lifecycle := false) deleted by the cutoff: deleted is true when its last
-- lifecycle row observed by the cutoff is '_deleted' (not '_created' or '_restored'); value_1 and
-- value_2 are the values the fields had then: the last new value observed by the cutoff, else the
-- old value of the first change observed after it. known_1 / known_2 is false when that field
-- never changed: the table's current value is the value then. Records without changes are not
-- returned: join it LEFT.
-- Only records with a '_deleted' row by the cutoff can be deleted then, so only their lifecycle
-- rows are read: every record has a '_created' row, and grouping them all cost more than the
-- rest of the aging query.
CREATE OR REPLACE MACRO changes_at(entity, cutoff, field_1 := NULL, field_2 := NULL, account := NULL,
                                   lifecycle := true) AS TABLE
WITH life AS (
    SELECT c.account, c.record_id, arg_max(c.field, c.observed_at) = '_deleted' AS deleted
    FROM record_changes c
    SEMI JOIN (SELECT d.account, d.record_id FROM record_changes d
               WHERE lifecycle AND d.entity = entity AND d.field = '_deleted' AND d.observed_at <= cutoff
                 AND (account IS NULL OR d.account = account)) d
           ON d.account = c.account AND d.record_id = c.record_id
    WHERE c.entity = entity AND c.field IN ('_created', '_deleted', '_restored') AND c.observed_at <= cutoff
    GROUP BY c.account, c.record_id
),
vals AS (
    -- arg_max_null, not arg_max: a change to NULL is a value too
    SELECT c.account, c.record_id,
           count(c.observed_at) FILTER (c.field = field_1) > 0 AS known_1,
           CASE WHEN count(*) FILTER (c.field = field_1 AND c.observed_at <= cutoff) > 0
                THEN arg_max_null(c.new_value, c.observed_at) FILTER (c.field = field_1 AND c.observed_at <= cutoff)
                ELSE arg_min_null(c.old_value, c.observed_at) FILTER (c.field = field_1 AND c.observed_at > cutoff)
           END AS value_1,
           count(c.observed_at) FILTER (c.field = field_2) > 0 AS known_2,
           CASE WHEN count(*) FILTER (c.field = field_2 AND c.observed_at <= cutoff) > 0
                THEN arg_max_null(c.new_value, c.observed_at) FILTER (c.field = field_2 AND c.observed_at <= cutoff)
                ELSE arg_min_null(c.old_value, c.observed_at) FILTER (c.field = field_2 AND c.observed_at > cutoff)
           END AS value_2
    FROM record_changes c
    WHERE c.entity = entity AND (account IS NULL OR c.account = account) AND c.field IN (field_1, field_2)
    GROUP BY c.account, c.record_id
)
SELECT coalesce(v.account, l.account) AS account, coalesce(v.record_id, l.record_id) AS record_id,
       coalesce(l.deleted, false) AS deleted,
       coalesce(v.known_1, false) AS known_1, v.value_1,
       coalesce(v.known_2, false) AS known_2, v.value_2
FROM vals v
FULL JOIN life l ON l.account = v.account AND l.record_id = v.record_id;
