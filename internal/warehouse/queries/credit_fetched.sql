-- Marks a batch of customers' credit history as fetched. One statement per batch, not per
-- customer: a first sync marks every customer, and a transaction each made that the fan-out's cost.
-- Parameters: 1 account, 2 customer ids (VARCHAR[]), 3 observed_at, 4 run id, 5 the reason each
-- was read (VARCHAR[], parallel to 2).

-- name: delete
DELETE FROM credit_fetch_state
WHERE account = $1 AND customer_id IN (SELECT unnest($2::VARCHAR[]));

-- name: insert
INSERT INTO credit_fetch_state (account, customer_id, last_fetched_at, run_id, reason)
SELECT $1, id, $3::TIMESTAMPTZ, $4, any_value(reason)
FROM (SELECT unnest($2::VARCHAR[]) AS id, unnest($5::VARCHAR[]) AS reason)
GROUP BY id;
