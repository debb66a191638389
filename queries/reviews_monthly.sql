-- Reviews per month (of the review's creation, in tz) over the last `months`
-- months up to the as-of date: count, average rating, stars and share of 4-5 stars.
-- Older reviews are counted in one first row per account whose month is NULL.
--
-- Parameters (SET VARIABLE name = value; before running this file to change one):
--   as_of    DATE     report date (end of this day in tz)      default current_date
--   tz       VARCHAR  time zone of the day boundary            default report_zone()
--   account  VARCHAR  only this billsync account; NULL = all   default NULL
--   months   INTEGER  how many months, the as-of month included  default 12
SET VARIABLE as_of = coalesce(getvariable('as_of'), current_date);
SET VARIABLE tz = coalesce(getvariable('tz'), report_zone());
SET VARIABLE months = coalesce(getvariable('months'), 12);

-- getvariable(), a constant: with a zone from a column timezone() looks it up
-- again for every row (twice as slow)
SELECT r.account,
       -- reviews of earlier months are one row with month NULL ("earlier"), first: the
       -- trend leaves nothing out, and its total equals reviews_by_product.sql's
       CASE WHEN date_trunc('month', local_time(r.created_at, getvariable('tz')))::DATE
                 > date_trunc('month', getvariable('as_of')::DATE) - to_months(getvariable('months')::INTEGER)
            THEN date_trunc('month', local_time(r.created_at, getvariable('tz')))::DATE END AS month,
       count(*) AS reviews,
       round(avg(r.rating), 2) AS avg_rating,
       count(*) FILTER (round(r.rating) = 1) AS stars_1,
       count(*) FILTER (round(r.rating) = 2) AS stars_2,
       count(*) FILTER (round(r.rating) = 3) AS stars_3,
       count(*) FILTER (round(r.rating) = 4) AS stars_4,
       count(*) FILTER (round(r.rating) = 5) AS stars_5,
       (stars_4 + stars_5) / reviews AS pct_positive
FROM reviews_at(getvariable('as_of'), tz := getvariable('tz'), account := getvariable('account')) r
GROUP BY r.account, month
ORDER BY r.account, month NULLS FIRST;
