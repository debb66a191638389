-- seconds_between(a, b): the seconds from instant a to instant b, as epoch(b - a) gives them in a
-- UTC session, from the microseconds: the subtraction of two TIMESTAMPTZ goes through ICU's
-- calendar, about 30 µs a value for dates a year apart (8 s for the 250k items of a collections
-- report at 1M records), where this is integer arithmetic.
CREATE OR REPLACE MACRO seconds_between(a, b) AS (epoch_us(b) - epoch_us(a)) / 1000000;
