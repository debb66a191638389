-- When billsync's change history starts, per account: the first time any record was seen.
-- Observation times are the service's clock (its Date header), as in record_changes, so this
-- is comparable with the as-of cutoff whatever the local clock said. A report as of an earlier
-- date cannot be answered from the history.
SELECT account, min(first_seen_at) AS history_from
FROM (SELECT account, first_seen_at FROM customers
      UNION ALL SELECT account, first_seen_at FROM invoices
      UNION ALL SELECT account, first_seen_at FROM payment_requests
      UNION ALL SELECT account, first_seen_at FROM unpaid_transactions)
GROUP BY account
ORDER BY account;
