-- Records deleted upstream: records that a complete list no longer contained,
-- noticed in the last `window_days` days up to the as-of date, with whether they
-- came back later.
--
-- Parameters (SET VARIABLE name = value; before running this file to change one):
--   as_of        DATE     report date (end of this day in tz)      default current_date
--   tz           VARCHAR  time zone of the day boundary            default report_zone()
--   account      VARCHAR  only this billsync account; NULL = all   default NULL
--   window_days  INTEGER  how many days back                       default 90
SET VARIABLE as_of = coalesce(getvariable('as_of'), current_date);
SET VARIABLE tz = coalesce(getvariable('tz'), report_zone());
SET VARIABLE window_days = coalesce(getvariable('window_days'), 90);

WITH params AS (
    SELECT end_of_day(getvariable('as_of'), getvariable('tz')) AS cutoff,
           end_of_day(getvariable('as_of')::DATE - getvariable('window_days')::INTEGER, getvariable('tz')) AS window_start,
           getvariable('account')::VARCHAR AS account
),
deleted AS (
    SELECT c.account, c.entity, c.record_id, c.observed_at AS deleted_at, c.run_id
    FROM record_changes c, params p
    WHERE c.field = '_deleted' AND c.observed_at > p.window_start AND c.observed_at <= p.cutoff
      AND (p.account IS NULL OR c.account = p.account)
),
-- deleted_record_labels: one branch per declared table a whole list writes, generated from
-- internal/entity; it names only rows ever marked deleted
labels AS (
    SELECT account, entity, id, label, amount, first_seen_at, last_seen_at FROM deleted_record_labels
)
SELECT d.account, d.entity, d.record_id, l.label, l.amount, d.deleted_at, d.run_id,
       l.first_seen_at,
       (SELECT min(r.observed_at) FROM record_changes r
        WHERE r.account = d.account AND r.entity = d.entity AND r.record_id = d.record_id
          AND r.field = '_restored' AND r.observed_at > d.deleted_at) AS restored_at
FROM deleted d
LEFT JOIN labels l ON l.account = d.account AND l.entity = d.entity AND l.id = d.record_id
ORDER BY d.account, d.deleted_at DESC, d.entity, d.record_id;
