package fetch

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"time"

	"github.com/billsync/billsync/internal/api"
	"github.com/billsync/billsync/internal/warehouse"
	"golang.org/x/sync/errgroup"
)

const creditStream = "credit_ledger"

// fanoutBatch is how many customers (or detail records) are merged and marked done together: a
// killed run loses at most one batch of work, and DuckDB merges stay large enough to be cheap.
const fanoutBatch = 500

type fanoutResult struct {
	StreamResult
	pending int
}

// creditFanout reads the credit history of every customer the warehouse says is due, most
// important first, until the run's budget is spent; the rest stays due for the next run.
func (s *syncer) creditFanout(ctx context.Context) (fanoutResult, error) {
	res := fanoutResult{StreamResult: StreamResult{Stream: creditStream}}
	targets, err := s.w.creditTargets(ctx, s.opts.CreditOverlap, s.opts.CreditRefresh)
	if err != nil {
		return res, err
	}
	started := time.Now()
	for len(targets) > 0 {
		n := min(fanoutBatch, len(targets))
		done, err := s.creditBatch(ctx, targets[:n], &res.StreamResult)
		if err != nil {
			return res, err
		}
		targets = targets[n:]
		if len(done) < n {
			res.pending = n - len(done) + len(targets)
			break
		}
	}
	res.Complete = res.pending == 0
	err = s.w.recordStream(ctx, warehouse.StreamStats{
		Stream: creditStream, Entity: string(warehouse.CreditLedger), Started: started, Finished: time.Now(),
		Pages: res.Pages, Records: res.Records, Requests: res.Pages, Complete: res.Complete,
	})
	s.progress(Progress{Stream: creditStream, Pages: res.Pages, Records: res.Records, Done: true})
	return res, err
}

// creditBatch fetches a batch of customers, merges their entries, then marks them fetched. It
// returns the customers it completed; it stops launching new ones when the budget is spent.
func (s *syncer) creditBatch(ctx context.Context, targets []warehouse.CreditTarget, res *StreamResult) ([]string, error) {
	ld, err := s.w.loader(ctx, warehouse.CreditLedger)
	if err != nil {
		return nil, err
	}
	var mu sync.Mutex
	var done []string
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(s.opts.Concurrency)
	for _, t := range targets {
		if !s.budgetLeft() {
			break
		}
		g.Go(func() error {
			if err := s.customerCredit(gctx, ld, t, res); err != nil {
				return fmt.Errorf("credit history of customer %s: %w", t.CustomerID, err)
			}
			mu.Lock()
			done = append(done, t.CustomerID)
			mu.Unlock()
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	m, err := s.w.merge(ctx, ld, false)
	if err != nil {
		return nil, err
	}
	res.Merge = addMerge(res.Merge, m)
	return done, s.w.markCreditFetched(ctx, done)
}

func (s *syncer) customerCredit(ctx context.Context, ld *warehouse.Loader, t warehouse.CreditTarget, res *StreamResult) error {
	q := url.Values{
		"limit":     {strconv.Itoa(s.opts.PageSize)},
		"sortField": {"datetime"},
		"sortOrder": {"asc"},
	}
	if !t.Since.IsZero() {
		q.Set("startDate", t.Since.UTC().Format(time.RFC3339))
	}
	for page := 1; ; page++ {
		q.Set("page", strconv.Itoa(page))
		if err := s.acquire(ctx); err != nil {
			return err
		}
		p, err := s.c.CreditHistory(ctx, t.CustomerID, q)
		s.release()
		if notFound(err) {
			return nil // the customer is gone upstream: nothing to read
		}
		if err != nil {
			return fmt.Errorf("page %d: %w", page, err)
		}
		if err := s.w.add(ctx, ld, page, p.Items); err != nil {
			return err
		}
		s.count(creditStream, res, int64(len(p.Items)))
		if !p.HasMore || len(p.Items) == 0 {
			return nil
		}
	}
}

type detailDef struct {
	stream string
	entity warehouse.Entity
	path   string
}

var details = []detailDef{
	{"product_details", warehouse.ProductDetails, "/hl/v1/product/"},
	{"payment_request_details", warehouse.PaymentRequestDetails, "/hl/v1/payment/"},
}

// detailFanout reads the detail endpoint of records the warehouse has never detailed. The
// detail adds little that changes (owner, qty), so each record is detailed once, within budget.
func (s *syncer) detailFanout(ctx context.Context, d detailDef) (fanoutResult, error) {
	res := fanoutResult{StreamResult: StreamResult{Stream: d.stream}}
	ids, err := s.w.detailTargets(ctx, d.entity)
	if err != nil {
		return res, err
	}
	started := time.Now()
	for batch := 0; len(ids) > 0; batch++ {
		n := min(fanoutBatch, len(ids))
		got, err := s.detailBatch(ctx, d, batch, ids[:n], &res.StreamResult)
		if err != nil {
			return res, err
		}
		ids = ids[n:]
		if got < n {
			res.pending = n - got + len(ids)
			break
		}
	}
	res.Complete = res.pending == 0
	err = s.w.recordStream(ctx, warehouse.StreamStats{
		Stream: d.stream, Entity: string(d.entity), Started: started, Finished: time.Now(),
		Pages: res.Pages, Records: res.Records, Requests: res.Pages, Complete: res.Complete,
	})
	s.progress(Progress{Stream: d.stream, Pages: res.Pages, Records: res.Records, Done: true})
	return res, err
}

func (s *syncer) detailBatch(ctx context.Context, d detailDef, batch int, ids []string, res *StreamResult) (int, error) {
	ld, err := s.w.loader(ctx, d.entity)
	if err != nil {
		return 0, err
	}
	var mu sync.Mutex
	fetched := 0
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(s.opts.Concurrency)
	for _, id := range ids {
		if !s.budgetLeft() {
			break
		}
		g.Go(func() error {
			if err := s.acquire(gctx); err != nil {
				return err
			}
			raw, err := s.c.Detail(gctx, d.path+url.PathEscape(id))
			s.release()
			switch {
			case notFound(err):
				// Gone since the list was read; the list stream marks it.
			case err != nil:
				return fmt.Errorf("%s %s: %w", d.stream, id, err)
			default:
				if err := s.w.add(gctx, ld, batch, []json.RawMessage{raw}); err != nil {
					return err
				}
				s.count(d.stream, res, 1)
			}
			mu.Lock()
			fetched++
			mu.Unlock()
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return 0, err
	}
	m, err := s.w.merge(ctx, ld, false)
	res.Merge = addMerge(res.Merge, m)
	return fetched, err
}

func notFound(err error) bool {
	var ae *api.APIError
	return errors.As(err, &ae) && ae.Status == http.StatusNotFound
}

func addMerge(a, b warehouse.MergeResult) warehouse.MergeResult {
	a.Inserted += b.Inserted
	a.Updated += b.Updated
	a.Unchanged += b.Unchanged
	a.Deleted += b.Deleted
	a.Restored += b.Restored
	return a
}
