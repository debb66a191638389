-- end_of_day(as_of[, tz]): the instant the day as_of ends in time zone tz, the cutoff "as of
-- that day" means in every report.
CREATE OR REPLACE MACRO end_of_day(as_of, tz := report_zone()) AS
    timezone(tz, (as_of::DATE + 1)::TIMESTAMP);
