-- local_time(ts, tz): the wall-clock time (TIMESTAMP) in zone tz at the instant ts, what
-- timezone(tz, ts) gives. ICU's timezone() costs about 0.4 µs a value, most of the reports' date
-- arithmetic; where billsync's report command has proven the zone's UTC offset constant over an
-- interval (against Go's zone database and ICU's own answers, internal/report/zone.go) it sets
-- the variables tz_fixed_zone, tz_fixed_from_us, tz_fixed_until_us (Unix microseconds, the
-- interval [from, until)) and tz_fixed_offset_us, and an instant inside is shifted by the offset
-- in integer arithmetic. Anything else, or without those variables, is timezone(tz, ts).
CREATE OR REPLACE MACRO local_time(ts, tz) AS
    CASE WHEN tz = getvariable('tz_fixed_zone')
              AND epoch_us(ts) >= getvariable('tz_fixed_from_us') AND epoch_us(ts) < getvariable('tz_fixed_until_us')
         THEN make_timestamp(epoch_us(ts) + getvariable('tz_fixed_offset_us'))
         ELSE timezone(tz, ts) END;
