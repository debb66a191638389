-- The lowest-rated recent reviews: reviews of the last `recent_days` days up to
-- the as-of date rated `low_rating_max` or lower, worst and newest first.
--
-- Parameters (SET VARIABLE name = value; before running this file to change one):
--   as_of    DATE     report date (end of this day in tz)      default current_date
--   tz       VARCHAR  time zone of the day boundary            default 'Asia/Jakarta'
--   account  VARCHAR  only this billsync account; NULL = all   default NULL
--   recent_days     INTEGER  how far back "recent" reaches, in days  default 90
--   low_rating_max  INTEGER  highest rating listed                    default 2
SET VARIABLE as_of = coalesce(getvariable('as_of'), current_date);
SET VARIABLE tz = coalesce(getvariable('tz'), 'Asia/Jakarta');
SET VARIABLE recent_days = coalesce(getvariable('recent_days'), 90);
SET VARIABLE low_rating_max = coalesce(getvariable('low_rating_max'), 2);

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
SELECT r.account, r.created_at, r.rating, r.product_name, r.product_type, r.customer_name,
       r.message, r.product_id, r.customer_id, r.id
FROM reviews_then r, params p
WHERE r.created_at >= p.cutoff - to_days(getvariable('recent_days')::INTEGER)
  AND r.rating <= getvariable('low_rating_max')::INTEGER
ORDER BY r.account, r.rating, r.created_at DESC, r.id;
