-- Records the sync stored but flagged (data_quality_flags), newest run first, up to the as-of
-- date:
--   api_key_redacted  the record's text held billsync's API key, or 8 or more of its characters
--                     in a row (a service echoing it into a name): stored with it replaced by
--                     "[redacted]", in the column and the raw JSON;
--   service_clock     the record is dated after this machine's clock by a service whose clock
--                     (its Date header) ran ahead of it: stored as the service dates it, which
--                     is that much off.
-- field is the record's JSON member; page and item say where a list page showed it (empty when
-- the flag was decided after the read).
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
)
SELECT f.account, f.flag, f.entity, f.record_id, f.field, f.detail, f.run_id, f.observed_at,
       f.path, f.page, f.item
FROM data_quality_flags f, params p
WHERE f.observed_at > p.window_start AND f.observed_at <= p.cutoff
  AND (p.account IS NULL OR f.account = p.account)
ORDER BY f.account, f.observed_at DESC, f.flag, f.entity, f.record_id, f.field;
