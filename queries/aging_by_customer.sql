-- Unpaid aging per customer: count of open items and outstanding amount per
-- overdue bucket, from the same open items as aging_detail.sql: the warehouse's
-- aging_items macro (docs/warehouse.md), which says which items count and how.
--
-- Parameters (SET VARIABLE name = value; before running this file to change one):
--   as_of               DATE     report date, items open at the end of this day   default current_date
--   tz                  VARCHAR  time zone of "the end of the day" and of dates    default report_zone()
--   account             VARCHAR  only this billsync account; NULL = all           default NULL
--   aging_basis         VARCHAR  'due' (due date) or 'created' (created date)     default 'due'
--   payment_terms_days  INTEGER  due = created + terms when the API sent no expiredAt  default 14
--   bucket_1/2/3        INTEGER  upper bounds of the overdue buckets in days       default 30, 60, 90
--
-- A past as_of is answered from the change history: an item counts when it was
-- created before the cutoff and its last lifecycle change observed by then was
-- not '_deleted' (one first seen later, still unpaid, was unpaid at the cutoff too).
SET VARIABLE as_of = coalesce(getvariable('as_of'), current_date);
SET VARIABLE tz = coalesce(getvariable('tz'), report_zone());
SET VARIABLE aging_basis = coalesce(getvariable('aging_basis'), 'due');
SET VARIABLE payment_terms_days = coalesce(getvariable('payment_terms_days'), 14);
SET VARIABLE bucket_1 = coalesce(getvariable('bucket_1'), 30);
SET VARIABLE bucket_2 = coalesce(getvariable('bucket_2'), 60);
SET VARIABLE bucket_3 = coalesce(getvariable('bucket_3'), 90);

-- Names sort as in a dictionary: ignoring case, an accented letter with its plain one (Ñ with N,
-- É with E; ICU's Indonesian collation), the ID breaking ties.
SELECT a.account, a.customer_name, a.customer_email, a.customer_id,
       count(*) AS items,
       coalesce(sum(a.amount) FILTER (a.bucket = 0), 0)::BIGINT AS bucket_0,
       coalesce(sum(a.amount) FILTER (a.bucket = 1), 0)::BIGINT AS bucket_1,
       coalesce(sum(a.amount) FILTER (a.bucket = 2), 0)::BIGINT AS bucket_2,
       coalesce(sum(a.amount) FILTER (a.bucket = 3), 0)::BIGINT AS bucket_3,
       coalesce(sum(a.amount) FILTER (a.bucket = 4), 0)::BIGINT AS bucket_4,
       sum(a.amount)::BIGINT AS outstanding,
       max(a.days_overdue) FILTER (a.days_overdue > 0) AS oldest_days_overdue
FROM aging_items(getvariable('as_of'), tz := getvariable('tz'), account := getvariable('account'),
                 basis := getvariable('aging_basis'), payment_terms_days := getvariable('payment_terms_days'),
                 bucket_1 := getvariable('bucket_1'), bucket_2 := getvariable('bucket_2'), bucket_3 := getvariable('bucket_3')) a
GROUP BY a.account, a.customer_name, a.customer_email, a.customer_id
ORDER BY outstanding DESC, a.account, a.customer_name COLLATE nocase.id, a.customer_id;
