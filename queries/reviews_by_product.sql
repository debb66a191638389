-- Reviews per product: count, average rating and the 1-5 star histogram, for the
-- reviews that existed at the end of the as-of date (ratings as they were then).
--
-- Parameters (SET VARIABLE name = value; before running this file to change one):
--   as_of    DATE     report date (end of this day in tz)      default current_date
--   tz       VARCHAR  time zone of the day boundary            default report_zone()
--   account  VARCHAR  only this billsync account; NULL = all   default NULL
SET VARIABLE as_of = coalesce(getvariable('as_of'), current_date);
SET VARIABLE tz = coalesce(getvariable('tz'), report_zone());

-- Names sort as in a dictionary: ignoring case, an accented letter with its plain one (Ñ with N,
-- É with E; ICU's Indonesian collation), the ID breaking ties.
SELECT account, product_name, product_type, product_id,
       count(*) AS reviews,
       round(avg(rating), 2) AS avg_rating,
       count(*) FILTER (round(rating) = 1) AS stars_1,
       count(*) FILTER (round(rating) = 2) AS stars_2,
       count(*) FILTER (round(rating) = 3) AS stars_3,
       count(*) FILTER (round(rating) = 4) AS stars_4,
       count(*) FILTER (round(rating) = 5) AS stars_5,
       stars_1 / reviews AS pct_1,
       stars_2 / reviews AS pct_2,
       stars_3 / reviews AS pct_3,
       stars_4 / reviews AS pct_4,
       stars_5 / reviews AS pct_5,
       max(created_at) AS last_review_at
FROM reviews_at(getvariable('as_of'), tz := getvariable('tz'), account := getvariable('account'))
GROUP BY account, product_name, product_type, product_id
ORDER BY account, reviews DESC, avg_rating, product_name COLLATE nocase.id, product_id;
