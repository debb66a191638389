-- reviews_at(as_of[, tz, account]): the reviews that existed at the end of the day as_of, with the
-- rating each had then.
CREATE OR REPLACE MACRO reviews_at(as_of, tz := report_zone(), account := NULL) AS TABLE
SELECT r.account, r.id, r.created_at, r.customer_id, r.customer_name, r.message,
       r.payment_link_id AS product_id, r.product_name, r.product_type,
       CASE WHEN h.known_1 THEN TRY_CAST(h.value_1 AS DOUBLE) ELSE r.rating END AS rating
FROM reviews r
LEFT JOIN changes_at('reviews', end_of_day(as_of, tz), 'rating', account := account) h
       ON h.account = r.account AND h.record_id = r.id
WHERE (account IS NULL OR r.account = account)
  AND r.created_at < end_of_day(as_of, tz) AND h.deleted IS NOT TRUE;
