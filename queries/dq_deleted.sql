-- Records deleted upstream: records that a complete list no longer contained,
-- noticed in the last `window_days` days up to the as-of date, with whether they
-- came back later.
--
-- Parameters (SET VARIABLE name = value; before running this file to change one):
--   as_of        DATE     report date (end of this day in tz)      default current_date
--   tz           VARCHAR  time zone of the day boundary            default report_zone()
--   account      VARCHAR  only this billsync account; NULL = all   default NULL
--   window_days  INTEGER  how many days back                       default 90
SET VARIABLE as_of = coalesce(getvariable('as_of'), current_date);
SET VARIABLE tz = coalesce(getvariable('tz'), report_zone());
SET VARIABLE window_days = coalesce(getvariable('window_days'), 90);

WITH params AS (
    SELECT end_of_day(getvariable('as_of'), getvariable('tz')) AS cutoff,
           end_of_day(getvariable('as_of')::DATE - getvariable('window_days')::INTEGER, getvariable('tz')) AS window_start,
           getvariable('account')::VARCHAR AS account
),
deleted AS (
    SELECT c.account, c.entity, c.record_id, c.observed_at AS deleted_at, c.run_id
    FROM record_changes c, params p
    WHERE c.field = '_deleted' AND c.observed_at > p.window_start AND c.observed_at <= p.cutoff
      AND (p.account IS NULL OR c.account = p.account)
),
-- each table's rows of the deleted records only (the semi joins), so labels are built for those
-- and not for every record
labels AS (
    SELECT x.account, 'customers' AS entity, x.id, coalesce(x.name, '') || ' <' || coalesce(x.email, '') || '>' AS label, NULL::BIGINT AS amount, x.first_seen_at, x.last_seen_at
    FROM customers x SEMI JOIN deleted d ON d.account = x.account AND d.entity = 'customers' AND d.record_id = x.id
    UNION ALL SELECT x.account, 'products', x.id, x.name, x.amount, x.first_seen_at, x.last_seen_at
    FROM products x SEMI JOIN deleted d ON d.account = x.account AND d.entity = 'products' AND d.record_id = x.id
    UNION ALL SELECT x.account, 'product_variants', x.id, x.name, x.amount, x.first_seen_at, x.last_seen_at
    FROM product_variants x SEMI JOIN deleted d ON d.account = x.account AND d.entity = 'product_variants' AND d.record_id = x.id
    UNION ALL SELECT x.account, 'payment_requests', x.id, x.name, x.amount, x.first_seen_at, x.last_seen_at
    FROM payment_requests x SEMI JOIN deleted d ON d.account = x.account AND d.entity = 'payment_requests' AND d.record_id = x.id
    UNION ALL SELECT x.account, 'invoices', x.id, x.name, x.amount, x.first_seen_at, x.last_seen_at
    FROM invoices x SEMI JOIN deleted d ON d.account = x.account AND d.entity = 'invoices' AND d.record_id = x.id
    UNION ALL SELECT x.account, 'invoice_transactions', x.id, 'Invoice ' || x.invoice_id, NULL, x.first_seen_at, x.last_seen_at
    FROM invoice_transactions x SEMI JOIN deleted d ON d.account = x.account AND d.entity = 'invoice_transactions' AND d.record_id = x.id
    UNION ALL SELECT x.account, 'unpaid_transactions', x.id, x.payment_link_name, x.amount, x.first_seen_at, x.last_seen_at
    FROM unpaid_transactions x SEMI JOIN deleted d ON d.account = x.account AND d.entity = 'unpaid_transactions' AND d.record_id = x.id
    UNION ALL SELECT x.account, 'reviews', x.id, x.product_name || ' (' || x.rating || ' ★)', NULL, x.first_seen_at, x.last_seen_at
    FROM reviews x SEMI JOIN deleted d ON d.account = x.account AND d.entity = 'reviews' AND d.record_id = x.id
)
SELECT d.account, d.entity, d.record_id, l.label, l.amount, d.deleted_at, d.run_id,
       l.first_seen_at,
       (SELECT min(r.observed_at) FROM record_changes r
        WHERE r.account = d.account AND r.entity = d.entity AND r.record_id = d.record_id
          AND r.field = '_restored' AND r.observed_at > d.deleted_at) AS restored_at
FROM deleted d
LEFT JOIN labels l ON l.account = d.account AND l.entity = d.entity AND l.id = d.record_id
ORDER BY d.account, d.deleted_at DESC, d.entity, d.record_id;
