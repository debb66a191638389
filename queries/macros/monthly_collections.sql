-- monthly_collections: per account and month of creation (in report_zone()), invoices and payment
-- requests issued and paid as they stand now. The collections report answers the same for a
-- past date and adds days to pay.
CREATE OR REPLACE VIEW monthly_collections AS
SELECT account, date_trunc('month', timezone(report_zone(), created_at))::DATE AS month,
       count(*) AS issued, sum(amount) AS issued_amount,
       count(*) FILTER (status = 'paid') AS paid, sum(amount) FILTER (status = 'paid') AS paid_amount,
       round(coalesce(sum(amount) FILTER (status = 'paid'), 0) / nullif(sum(amount), 0), 4) AS collected_share,
       count(*) FILTER (status IN ('active', 'unpaid')) AS still_open
FROM (SELECT account, created_at, amount, status FROM invoices WHERE deleted_upstream_at IS NULL
      UNION ALL
      SELECT account, created_at, amount, status FROM payment_requests WHERE deleted_upstream_at IS NULL)
GROUP BY ALL
ORDER BY account, month;
