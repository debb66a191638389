-- Customers whose credit history is due for a read, most useful first, with the reason.
-- Parameters: 1 account, 2 now (the run's observation time), 3 how far the service's clock is
-- ahead of now's (µs; 0 when now is the service's clock), 4 refresh bound (µs), 5 shortest
-- adaptive interval (µs), 6 hints (JSON [{"c": customer id, "t": epoch µs}]), 7 limit.
--
-- The API cannot say whose credit changed, and at 20 requests/minute a read that finds nothing
-- is a request lost, so a customer is read only for a reason, in this order (a run's budget may
-- stop anywhere; the rest waits):
--   never     never read: the only way to learn what it holds, newest customer first;
--   topup     billsync itself sent credit to it since the last read (an add-credit of a job,
--             whatever its outcome; the caller passes them as hints from the job journal): the
--             finance reports compare the balance the service reported with this ledger;
--   signal    something the warehouse saw since the last read may have moved its credit
--             (read this run: "active" customers are at most a day stale with nightly runs):
--             a payment, unpaid transaction or invoice of a credit-usage product first seen,
--             changed or settled since; a webhook event naming the customer, unless it is a
--             payment of something that is not a credit-usage product; a ledger entry with credit
--             whose expiredAt passed since, while the customer still held credit on that product
--             (an EXPIRE_VOID is due);
--   bound     the hard staleness bound: its last read would be older than the refresh bound
--             before the next run (assumed no further away than this run is from the previous
--             one, with an eighth of that gap to spare for a run started late), the only way to
--             catch credit given without any other trace;
--   interval  its own history says an entry has probably arrived: credit is used at each
--             customer's own pace, so the interval is the mean gap between its entries over the
--             90 days before the last read (reading after one mean gap finds an entry about
--             63% of the time if entries arrive at random at that pace), kept between the
--             shortest interval (a customer using credit daily is read every run) and the bound.
--             A customer who moved once yesterday is read after a day, then two, four...; one
--             unchanged for a month waits for the bound, and so does one whose ledger leaves it
--             nothing to spend (below);
--   ahead     none of the above, but read now so that no later run carries more than its share
--             of the bound's reads (the levelling, below).
-- Within a reason the customer read longest ago goes first.
--
-- Times are compared as epoch microseconds. "Seen since the last read" uses the observation
-- times billsync records (first_seen_at, record_changes, deleted_upstream_at), not the server's
-- createdAt, so a record the previous run's lists had not shown yet still counts.
--
-- Two clocks: billsync's times (the reads, the observations) are on the run's clock, the
-- service's when it agreed with this machine's, this machine's otherwise (fetch/clock.go); the
-- ledger's createdAt and expiredAt are the service's dates. The service's dates are compared
-- only with the service's clock: a read's, its time moved by how far the service's clock was
-- ahead in the run that read it (sync_runs.clock_offset_ms) when that run found records dated by
-- it (flagged service_clock), and now's, by parameter 3 (fetch decides it the same way). Under a
-- service clock 48 hours ahead, comparing its dates with this machine's times put its last two
-- days of entries after every read: the interval saw none of a customer's recent pace, and
-- under a clock years ahead none at all. A read whose run could not tell the offset (answers
-- without a Date header) gives no interval: the customer waits for a signal or the bound.
WITH acct AS (
    SELECT ?::VARCHAR AS account, ?::TIMESTAMPTZ AS now, ?::BIGINT AS ahead_us, ?::BIGINT AS refresh_us, ?::BIGINT AS min_us,
           90 * 86400 * 1000000::BIGINT AS history_us, ?::VARCHAR AS hints
),
hinted AS (
    SELECT h.c AS customer_id, max(h.t) AS at_us
    FROM (SELECT unnest(from_json(coalesce(hints, '[]'), '[{"c":"VARCHAR","t":"BIGINT"}]'), recursive := true) FROM acct) h
    GROUP BY h.c
),
fetched AS (
    SELECT f.customer_id, f.last_fetched_at, epoch_us(f.last_fetched_at) AS last_us,
           -- the service's clock at the read, as its dates show it: the read's time when the run
           -- was on the service's clock (or is older than the runs' clock columns), moved by the
           -- offset when it was on this machine's and the run found records the service dated
           -- ahead by it (flagged: a proxy's wrong Date over records dated right moves nothing);
           -- NULL when that run's answers had no Date to tell the offset
           CASE WHEN r.clock_source IS DISTINCT FROM 'machine' THEN epoch_us(f.last_fetched_at)
                WHEN r.clock_offset_ms IS NULL THEN NULL
                WHEN r.id IN (SELECT q.run_id FROM data_quality_flags q WHERE q.account = f.account AND q.flag = 'service_clock')
                    THEN epoch_us(f.last_fetched_at) + r.clock_offset_ms * 1000
                ELSE epoch_us(f.last_fetched_at) END AS svc_last_us
    FROM credit_fetch_state f JOIN acct ON f.account = acct.account
    LEFT JOIN sync_runs r ON r.id = f.run_id AND r.account = f.account
),
-- The gap since the previous run's reads, at most the bound: with no earlier read it is zero.
gap AS (
    -- (least() skips a NULL: with no earlier read it would give the whole bound)
    SELECT CASE WHEN max(f.last_us) IS NULL THEN 0 ELSE least(epoch_us(a.now) - max(f.last_us), a.refresh_us) END AS gap_us,
           -- a run may start a little later after this one than this one did after the previous
           -- (cron's minutes, a slow start): the bound keeps an eighth of the gap to spare
           CASE WHEN max(f.last_us) IS NULL THEN 0 ELSE least(epoch_us(a.now) - max(f.last_us), a.refresh_us) // 8 END AS spare_us,
           min(f.last_fetched_at) AS oldest_read
    FROM acct a LEFT JOIN fetched f ON f.last_fetched_at < a.now
    GROUP BY a.now, a.refresh_us
),
credit_products AS (
    SELECT p.id FROM products p, acct WHERE p.account = acct.account AND p.sub_type = 'credit_usage'
),
credit_invoices AS (
    SELECT i.id, i.customer_id, i.first_seen_at FROM invoices i, acct
    WHERE i.account = acct.account
      AND (i.id IN (SELECT id FROM credit_products)
           OR (i.raw->>'$.extraData.idProd') IN (SELECT id FROM credit_products))
),
credit_unpaid AS (
    SELECT u.id, u.customer_id, u.first_seen_at, u.deleted_upstream_at FROM unpaid_transactions u, acct
    WHERE u.account = acct.account AND u.payment_link_id IN (SELECT id FROM credit_products)
),
signals AS (
    SELECT customer_id, first_seen_at AS seen_at FROM credit_invoices
    UNION ALL
    SELECT i.customer_id, c.observed_at FROM record_changes c JOIN credit_invoices i ON i.id = c.record_id, acct
    WHERE c.account = acct.account AND c.entity = 'invoices'
    UNION ALL
    SELECT customer_id, first_seen_at FROM credit_unpaid
    UNION ALL
    SELECT customer_id, deleted_upstream_at FROM credit_unpaid WHERE deleted_upstream_at IS NOT NULL
    UNION ALL
    SELECT w.event_data->>'$.customerId', w.first_seen_at FROM webhook_deliveries w, acct, gap
    WHERE w.account = acct.account AND w.first_seen_at > gap.oldest_read
      AND NOT (coalesce(w.event_type, '') LIKE 'payment.%'
               AND coalesce(w.event_data->>'$.productId', w.payment_link_id, '') NOT IN (SELECT id FROM credit_products)
               AND coalesce(w.payment_link_id, '') NOT IN (SELECT id FROM credit_invoices))
),
-- expiries are the service's dates: passed since the last read by the service's clock
expiries AS (
    SELECT l.customer_id, epoch_us(max(l.expired_at)) AS expired_us
    FROM credit_ledger l
    JOIN (SELECT b.customer_id, b.product_id FROM credit_ledger b, acct a2 WHERE b.account = a2.account
          GROUP BY b.customer_id, b.product_id
          HAVING sum(coalesce(b.credit, 0)) > sum(coalesce(b.debit, 0))) held USING (customer_id, product_id), acct
    WHERE l.account = acct.account AND l.credit > 0 AND epoch_us(l.expired_at) <= epoch_us(acct.now) + acct.ahead_us
    GROUP BY l.customer_id
),
signalled AS (
    SELECT customer_id, max(seen_at) AS seen_at FROM signals WHERE customer_id IS NOT NULL GROUP BY customer_id
),
history AS (
    SELECT l.customer_id,
           count(*) FILTER (WHERE epoch_us(l.created_at) > f.svc_last_us - a.history_us) AS recent,
           epoch_us(min(l.created_at)) AS first_us
    FROM credit_ledger l JOIN fetched f USING (customer_id), acct a
    WHERE l.account = a.account AND epoch_us(l.created_at) <= f.svc_last_us
    GROUP BY l.customer_id
),
-- Customers whose ledger, as read, leaves them exactly nothing on every product: no use can
-- spend and no expiry void what they do not have, so until credit is added (a paid checkout,
-- billsync's own add-credit: both signals above) their history has nothing to add but the rare
-- top-up of the merchant's dashboard, which the bound catches. A negative balance means the
-- ledger read is not the whole story: no such conclusion then.
emptied AS (
    SELECT customer_id FROM (
        SELECT l.customer_id, l.product_id, sum(coalesce(l.credit, 0)) - sum(coalesce(l.debit, 0)) AS balance
        FROM credit_ledger l, acct a WHERE l.account = a.account
        GROUP BY l.customer_id, l.product_id)
    GROUP BY customer_id HAVING bool_and(balance = 0)
),
intervals AS (
    SELECT h.customer_id,
           least(greatest(greatest(least(a.history_us, f.svc_last_us - h.first_us), a.min_us) // h.recent,
                          a.min_us), a.refresh_us) AS interval_us
    FROM history h JOIN fetched f USING (customer_id), acct a
    WHERE h.recent > 0 AND h.customer_id NOT IN (SELECT customer_id FROM emptied)
),
candidates AS (
    SELECT c.id AS customer_id, greatest(c.created_at, c.updated_at) AS active_at FROM customers c, acct
    WHERE c.account = acct.account AND c.deleted_upstream_at IS NULL
    UNION
    SELECT l.customer_id, NULL FROM credit_ledger l, acct WHERE l.account = acct.account
),
reasoned AS (
    SELECT c.customer_id, max(c.active_at) AS active_at, any_value(f.last_fetched_at) AS last_fetched_at,
           any_value(f.last_us) AS last_us, any_value(i.interval_us) AS interval_us,
           CASE
               WHEN any_value(f.last_fetched_at) IS NULL THEN 'never'
               WHEN any_value(h.at_us) > any_value(f.last_us) THEN 'topup'
               WHEN any_value(s.seen_at) > any_value(f.last_fetched_at) THEN 'signal'
               -- (a read whose run had no Date: its time taken for the service's, as an expiry only adds a read)
               WHEN any_value(e.expired_us) > coalesce(any_value(f.svc_last_us), any_value(f.last_us)) THEN 'signal'
               WHEN any_value(f.last_us) + any_value(a.refresh_us) <= epoch_us(any_value(a.now)) + any_value(g.gap_us) + any_value(g.spare_us) THEN 'bound'
               WHEN any_value(f.last_us) + any_value(i.interval_us) <= epoch_us(any_value(a.now)) + any_value(g.gap_us) // 2 THEN 'interval'
           END AS reason
    FROM candidates c
    LEFT JOIN fetched f USING (customer_id)
    LEFT JOIN signalled s USING (customer_id)
    LEFT JOIN expiries e USING (customer_id)
    LEFT JOIN hinted h USING (customer_id)
    LEFT JOIN intervals i USING (customer_id), acct a, gap g
    WHERE c.customer_id IS NOT NULL AND c.customer_id <> ''
    GROUP BY c.customer_id
),
-- The run (0 is this one, the next 1, ... assumed a gap apart) at which the bound would read a
-- customer, and at which its interval would: the conditions above solved for the run.
runs AS (
    SELECT r.*,
           ceil((r.last_us + a.refresh_us - epoch_us(a.now) - g.spare_us) / g.gap_us) - 1 AS bound_run,
           ceil((r.last_us + r.interval_us - epoch_us(a.now) - g.gap_us // 2) / g.gap_us) AS interval_run
    FROM reasoned r, acct a, gap g
    WHERE g.gap_us > 0
),
-- Customers its own interval reads (this run, or before the bound would) are "paced"; the
-- others are read by the bound unless a signal comes first.
paced AS (
    SELECT customer_id FROM runs WHERE reason = 'interval' OR (reason IS NULL AND interval_run < bound_run)
),
-- ahead, the levelling: customers read in the same run come due for the bound in the same run,
-- and a first sync reads everyone at once, so six nights later (7-day bound, nightly runs) the
-- whole base would be read in one run, and again every period after. The customers not paced
-- are the base; a customer read now is due for the bound after a period of runs (6 with nightly
-- runs and 7 days), so one run's share is base / period. For every k, at most k shares may be
-- left to the bound in the next k runs: the longest-unread beyond that are read now, after
-- every other reason (a run's budget takes those first). A level base needs no reads ahead: its
-- nights' bound reads are about a share each, so a period reads what the bound alone would,
-- spread evenly. A lump (a first sync, skipped runs, many customers added at once) is spread
-- within one period. Reads ahead only add reads, never delay one: the bounds above hold as they
-- are.
waiting AS (
    SELECT customer_id, bound_run, row_number() OVER (ORDER BY last_us, customer_id) AS rank
    FROM runs WHERE reason IS NULL AND customer_id NOT IN (SELECT customer_id FROM paced)
),
share AS (
    SELECT (SELECT count(*) FROM reasoned WHERE customer_id NOT IN (SELECT customer_id FROM paced))
           / greatest(ceil((a.refresh_us - g.spare_us) / g.gap_us) - 1, 1) AS per_run
    FROM acct a, gap g
    WHERE g.gap_us > 0
),
ahead AS (
    SELECT w.customer_id
    FROM waiting w, (SELECT max(w2.rank - ceil(w2.bound_run * s.per_run)) AS n FROM waiting w2, share s) need
    WHERE w.rank <= need.n
),
chosen AS (
    SELECT customer_id, active_at, last_fetched_at, coalesce(reason, 'ahead') AS reason
    FROM reasoned
    WHERE reason IS NOT NULL OR customer_id IN (SELECT customer_id FROM ahead)
)
SELECT customer_id, last_fetched_at, reason
FROM chosen
ORDER BY CASE reason WHEN 'never' THEN 0 WHEN 'topup' THEN 1 WHEN 'signal' THEN 2 WHEN 'bound' THEN 3
                     WHEN 'interval' THEN 4 ELSE 5 END,
         CASE WHEN reason = 'never' THEN active_at END DESC NULLS LAST,
         last_fetched_at ASC,
         customer_id
LIMIT ?;
