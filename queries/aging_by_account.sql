-- Unpaid aging per account: what each billsync account's customers owe at the end of the as-of
-- date, per overdue bucket, from the same open items as aging_by_customer.sql (the aging_items
-- macro): the sheet a firm closing many merchants' books reads first, one row per merchant,
-- the fleet's total below.
--
-- Parameters (SET VARIABLE name = value; before running this file to change one):
--   as_of               DATE     report date, items open at the end of this day   default current_date
--   tz                  VARCHAR  time zone of "the end of the day" and of dates    default report_zone()
--   account             VARCHAR  only this billsync account; NULL = all           default NULL
--   aging_basis         VARCHAR  'due' (due date) or 'created' (created date)     default 'due'
--   payment_terms_days  INTEGER  due = created + terms when the API sent no expiredAt  default 14
--   bucket_1/2/3        INTEGER  upper bounds of the overdue buckets in days       default 30, 60, 90
SET VARIABLE as_of = coalesce(getvariable('as_of'), current_date);
SET VARIABLE tz = coalesce(getvariable('tz'), report_zone());
SET VARIABLE aging_basis = coalesce(getvariable('aging_basis'), 'due');
SET VARIABLE payment_terms_days = coalesce(getvariable('payment_terms_days'), 14);
SET VARIABLE bucket_1 = coalesce(getvariable('bucket_1'), 30);
SET VARIABLE bucket_2 = coalesce(getvariable('bucket_2'), 60);
SET VARIABLE bucket_3 = coalesce(getvariable('bucket_3'), 90);

-- customers counts the rows aging_by_customer.sql gives the account (a customer is its name,
-- e-mail and ID together, as there). Accounts in name order: a merchant is found where it was
-- last month. The account is account_name: the reports leave a column named account out when
-- the warehouse holds one account, and here it is the row's label.
SELECT a.account AS account_name,
       count(DISTINCT (a.customer_name, a.customer_email, a.customer_id)) AS customers,
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
GROUP BY a.account
ORDER BY account_name;
