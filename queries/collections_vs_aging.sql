-- Collections against aging: the open amount of the collections report (invoices and payment
-- requests issued in the last `months` months, still open at the end of the as-of date) and the
-- outstanding total of the aging report differ by what only aging counts. One row per line, per
-- account: open here, + unpaid transactions of other kinds (membership payments, generic links,
-- ...), + open invoices and payment requests issued before the window, ± anything else (an item
-- whose status or amount the two sources see differently), = aging's outstanding. The lines add up
-- exactly: the last but one is the difference left, whatever it is.
--
-- Parameters (SET VARIABLE name = value; before running this file to change one):
--   as_of    DATE     report date (end of this day in tz)          default current_date
--   tz       VARCHAR  time zone of months and the day boundary     default report_zone()
--   account  VARCHAR  only this billsync account; NULL = all       default NULL
--   months   INTEGER  how many months, the as-of month included    default 12
SET VARIABLE as_of = coalesce(getvariable('as_of'), current_date);
SET VARIABLE tz = coalesce(getvariable('tz'), report_zone());
SET VARIABLE months = coalesce(getvariable('months'), 12);

WITH window_start AS (
    -- the first day of the collections report's first month, in tz
    SELECT timezone(getvariable('tz'),
                    (date_trunc('month', getvariable('as_of')::DATE) - to_months(getvariable('months')::INTEGER - 1))::TIMESTAMP) AS start_at
),
open_here AS (
    SELECT account, coalesce(sum(amount) FILTER (status_then IN ('active', 'unpaid')), 0) AS amount
    FROM collection_items(getvariable('as_of'), tz := getvariable('tz'), account := getvariable('account'),
                          months := getvariable('months'))
    GROUP BY account
),
aging AS (
    SELECT account,
           sum(amount) AS outstanding,
           coalesce(sum(amount) FILTER (type NOT IN ('invoice', 'payment_request')), 0) AS other_kinds,
           coalesce(sum(amount) FILTER (type IN ('invoice', 'payment_request') AND created_at < (SELECT start_at FROM window_start)), 0)
               AS before_window
    FROM aging_items(getvariable('as_of'), tz := getvariable('tz'), account := getvariable('account'))
    GROUP BY account
),
both_ AS (
    SELECT coalesce(a.account, o.account) AS account, coalesce(o.amount, 0) AS open_here,
           coalesce(a.other_kinds, 0) AS other_kinds, coalesce(a.before_window, 0) AS before_window,
           coalesce(a.outstanding, 0) AS outstanding
    FROM aging a FULL JOIN open_here o ON o.account = a.account
)
SELECT account, line, amount::BIGINT AS amount
FROM both_, LATERAL (VALUES
    (1, 'recon_open_here', open_here),
    (2, 'recon_other_kinds', other_kinds),
    (3, 'recon_before_window', before_window),
    (4, 'recon_rest', outstanding - open_here - other_kinds - before_window),
    (5, 'recon_aging', outstanding)) v(n, line, amount)
ORDER BY account, n;
