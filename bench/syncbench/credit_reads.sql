-- Credit-history reads of one run by the reason they were due for, and how many of them found
-- an entry the warehouse did not hold before (first seen in that run). credit_fetch_state keeps
-- each customer's latest read.
-- Parameter: 1 run id.
SELECT coalesce(f.reason, 'none') AS reason,
       count(*) AS reads,
       count(*) FILTER (WHERE EXISTS (SELECT 1 FROM credit_ledger l
                                      WHERE l.account = f.account AND l.customer_id = f.customer_id
                                        AND l.first_seen_run = f.run_id)) AS hits
FROM credit_fetch_state f
WHERE f.run_id = $1
GROUP BY ALL;
