-- How many instants ICU was asked about, and at how many its UTC offset for zone $1 is not $2
-- microseconds: every 7 days from $3 and the last microsecond before $4 (Unix microseconds).
SELECT count(*) AS checked,
       count(*) FILTER (epoch_us(timezone($1::VARCHAR, make_timestamptz(u))) - u IS DISTINCT FROM $2::BIGINT) AS differ
FROM (SELECT range AS u FROM range($3::BIGINT, $4::BIGINT, 604800000000)
      UNION ALL SELECT $4::BIGINT - 1);
