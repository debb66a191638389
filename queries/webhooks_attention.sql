-- Webhook deliveries that need attention: records of the window that were not
-- delivered successfully at the end of the as-of date (failed, or pending with
-- the next delivery attempt), oldest first.
--
-- Parameters (SET VARIABLE name = value; before running this file to change one):
--   as_of        DATE     report date (end of this day in tz)      default current_date
--   tz           VARCHAR  time zone of the day boundary            default report_zone()
--   account      VARCHAR  only this billsync account; NULL = all   default NULL
--   window_days  INTEGER  how many days of records                 default 30
SET VARIABLE as_of = coalesce(getvariable('as_of'), current_date);
SET VARIABLE tz = coalesce(getvariable('tz'), report_zone());
SET VARIABLE window_days = coalesce(getvariable('window_days'), 30);

SELECT account, created_at, event_type, url_destination, status, next_delivery, updated_at,
       response_payload, payment_link_id, payment_link_transaction_id, id
FROM webhook_deliveries_at(getvariable('as_of'), tz := getvariable('tz'), account := getvariable('account'),
                           window_days := getvariable('window_days'))
WHERE status <> 'SUCCESS'
ORDER BY account, created_at, id;
