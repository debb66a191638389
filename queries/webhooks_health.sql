-- Webhook delivery health per event type and destination, for the delivery
-- records created in the last `window_days` days up to the as-of date, with the
-- status each record had at the end of the as-of date.
--
-- Parameters (SET VARIABLE name = value; before running this file to change one):
--   as_of        DATE     report date (end of this day in tz)      default current_date
--   tz           VARCHAR  time zone of the day boundary            default report_zone()
--   account      VARCHAR  only this billsync account; NULL = all   default NULL
--   window_days  INTEGER  how many days of records                 default 30
--
-- success_rate = succeeded / (succeeded + failed); records still PENDING are left out of it.
SET VARIABLE as_of = coalesce(getvariable('as_of'), current_date);
SET VARIABLE tz = coalesce(getvariable('tz'), report_zone());
SET VARIABLE window_days = coalesce(getvariable('window_days'), 30);

SELECT account, event_type, url_destination,
       count(*) AS deliveries,
       count(*) FILTER (status = 'SUCCESS') AS succeeded,
       count(*) FILTER (status = 'FAILED') AS failed,
       count(*) FILTER (status NOT IN ('SUCCESS', 'FAILED')) AS pending,
       succeeded / nullif(succeeded + failed, 0) AS success_rate,
       count(*) FILTER (next_delivery IS NOT NULL AND status <> 'SUCCESS') AS retries_scheduled,
       min(next_delivery) FILTER (status <> 'SUCCESS') AS next_delivery_at,
       max(created_at) AS last_record_at
FROM webhook_deliveries_at(getvariable('as_of'), tz := getvariable('tz'), account := getvariable('account'),
                           window_days := getvariable('window_days'))
GROUP BY account, event_type, url_destination
ORDER BY account, success_rate NULLS FIRST, deliveries DESC, event_type, url_destination;
