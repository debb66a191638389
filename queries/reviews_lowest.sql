-- The lowest-rated recent reviews: reviews of the last `recent_days` days up to
-- the as-of date rated `low_rating_max` or lower, worst and newest first.
--
-- Parameters (SET VARIABLE name = value; before running this file to change one):
--   as_of    DATE     report date (end of this day in tz)      default current_date
--   tz       VARCHAR  time zone of the day boundary            default report_zone()
--   account  VARCHAR  only this billsync account; NULL = all   default NULL
--   recent_days     INTEGER  how far back "recent" reaches, in days  default 90
--   low_rating_max  INTEGER  highest rating listed                    default 2
SET VARIABLE as_of = coalesce(getvariable('as_of'), current_date);
SET VARIABLE tz = coalesce(getvariable('tz'), report_zone());
SET VARIABLE recent_days = coalesce(getvariable('recent_days'), 90);
SET VARIABLE low_rating_max = coalesce(getvariable('low_rating_max'), 2);

SELECT r.account, r.created_at, r.rating, r.product_name, r.product_type, r.customer_name,
       r.message, r.product_id, r.customer_id, r.id
FROM reviews_at(getvariable('as_of'), tz := getvariable('tz'), account := getvariable('account')) r
WHERE r.created_at >= end_of_day(getvariable('as_of'), getvariable('tz')) - to_days(getvariable('recent_days')::INTEGER)
  AND r.rating <= getvariable('low_rating_max')::INTEGER
ORDER BY r.account, r.rating, r.created_at DESC, r.id;
