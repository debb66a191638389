-- Reviews per month (of the review's creation, in tz) over the last `months`
-- months up to the as-of date: count, average rating, stars and share of 4-5 stars.
--
-- Parameters (SET VARIABLE name = value; before running this file to change one):
--   as_of    DATE     report date (end of this day in tz)      default current_date
--   tz       VARCHAR  time zone of the day boundary            default 'Asia/Jakarta'
--   account  VARCHAR  only this billsync account; NULL = all   default NULL
--   months   INTEGER  how many months, the as-of month included  default 12
SET VARIABLE as_of = coalesce(getvariable('as_of'), current_date);
SET VARIABLE tz = coalesce(getvariable('tz'), 'Asia/Jakarta');
SET VARIABLE months = coalesce(getvariable('months'), 12);

-- BEGIN reviews_then (identical in every reviews_*.sql)
WITH params AS (
    SELECT getvariable('as_of')::DATE AS as_of,
           timezone(getvariable('tz'), (getvariable('as_of')::DATE + 1)::TIMESTAMP) AS cutoff,
           getvariable('tz')::VARCHAR AS tz,
           getvariable('account')::VARCHAR AS account
),
hist AS (
    SELECT c.account, c.record_id,
           arg_max(c.field, c.observed_at) FILTER (c.field IN ('_created', '_deleted', '_restored') AND c.observed_at <= p.cutoff) AS life,
           arg_max({v: c.new_value}, c.observed_at) FILTER (c.field = 'rating' AND c.observed_at <= p.cutoff) AS rating_before,
           arg_min({v: c.old_value}, c.observed_at) FILTER (c.field = 'rating' AND c.observed_at > p.cutoff) AS rating_after
    FROM record_changes c, params p
    WHERE c.entity = 'reviews' AND (p.account IS NULL OR c.account = p.account)
    GROUP BY c.account, c.record_id
),
reviews_then AS (
    SELECT r.account, r.id, r.created_at, r.customer_id, r.customer_name, r.message,
           r.payment_link_id AS product_id, r.product_name, r.product_type,
           CASE WHEN h.rating_before IS NOT NULL THEN TRY_CAST(h.rating_before.v AS DOUBLE)
                WHEN h.rating_after IS NOT NULL THEN TRY_CAST(h.rating_after.v AS DOUBLE)
                ELSE r.rating END AS rating
    FROM reviews r
    JOIN params p ON p.account IS NULL OR r.account = p.account
    LEFT JOIN hist h ON h.account = r.account AND h.record_id = r.id
    WHERE r.created_at < p.cutoff AND coalesce(h.life, '_created') <> '_deleted'
)
-- END reviews_then
-- getvariable(), a constant, not p.tz: with a zone from a column timezone()
-- looks it up again for every row (twice as slow)
SELECT r.account, date_trunc('month', timezone(getvariable('tz'), r.created_at))::DATE AS month,
       count(*) AS reviews,
       round(avg(r.rating), 2) AS avg_rating,
       count(*) FILTER (round(r.rating) = 1) AS stars_1,
       count(*) FILTER (round(r.rating) = 2) AS stars_2,
       count(*) FILTER (round(r.rating) = 3) AS stars_3,
       count(*) FILTER (round(r.rating) = 4) AS stars_4,
       count(*) FILTER (round(r.rating) = 5) AS stars_5,
       (stars_4 + stars_5) / reviews AS pct_positive
FROM reviews_then r, params p
WHERE month > date_trunc('month', p.as_of) - to_months(getvariable('months')::INTEGER)
GROUP BY r.account, month
ORDER BY r.account, month;
