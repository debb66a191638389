-- Conflicting duplicates: records a list sent twice in one sync run with different
-- contents, even when billsync paged the list once more. The warehouse keeps the
-- last version read; both versions are listed here with where each came from, and
-- the fields in which they differ, so the finance team can check the record with
-- the service. Runs up to the as-of date, newest first.
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
SELECT d.account, d.entity, d.id AS record_id, d.run_id, d.observed_at,
       d.path, d.first_page, d.first_item, d.second_page, d.second_item,
       -- NULL when the earlier version was not kept (the workbook says so)
       CASE WHEN d.first_raw IS NOT NULL THEN array_to_string(list_sort(list_filter(
                     list_distinct(json_keys(d.first_raw) || json_keys(d.second_raw)),
                     k -> json_extract(d.first_raw, '$."' || k || '"') IS DISTINCT FROM json_extract(d.second_raw, '$."' || k || '"'))), ', ')
       END AS differing_fields,
       d.first_raw::VARCHAR AS first_version,
       d.second_raw::VARCHAR AS kept_version
FROM data_quality_conflicts d, params p
WHERE d.observed_at > p.window_start AND d.observed_at <= p.cutoff
  AND (p.account IS NULL OR d.account = p.account)
ORDER BY d.account, d.observed_at DESC, d.entity, d.id;
