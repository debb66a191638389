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
	"github.com/billsync/billsync/internal/entity"
	"github.com/billsync/billsync/internal/syncdata"
	"golang.org/x/sync/errgroup"
)

const creditStream = string(entity.CreditLedger)

type fanoutResult struct {
	StreamResult
	pending int
	reasons []ReasonReads
}

// ReasonReads counts, for one reason a customer's credit history was due for
// (syncdata.CreditTarget.Reason), the customers due and those the run read.
type ReasonReads struct {
	Reason    string
	Due, Read int
}

// reasonReads counts targets by reason, in the order reasons first appear: the targets' order,
// most important first. done is a prefix of targets.
func reasonReads(targets []syncdata.CreditTarget, done int) []ReasonReads {
	var out []ReasonReads
	at := map[string]int{}
	for i, t := range targets {
		j, ok := at[t.Reason]
		if !ok {
			j = len(out)
			at[t.Reason] = j
			out = append(out, ReasonReads{Reason: t.Reason})
		}
		out[j].Due++
		if i < done {
			out[j].Read++
		}
	}
	return out
}

// creditFanout reads the credit history of every customer the warehouse says is due, most
// important first, until the run's budget is spent; the rest stays due for the next run.
func (s *syncer) creditFanout(ctx context.Context) (fanoutResult, error) {
	res := fanoutResult{StreamResult: StreamResult{Stream: creditStream}}
	ahead, err := s.serviceAhead(ctx)
	if err != nil {
		return res, err
	}
	targets, err := s.sink.CreditTargets(ctx, syncdata.CreditPlan{ServiceAhead: ahead,
		Overlap: s.opts.CreditOverlap, Refresh: s.opts.CreditRefresh, Hints: s.opts.CreditHints})
	if err != nil {
		return res, err
	}
	s.opts.Log.Info("credit histories due", append([]any{"customers", len(targets)}, reasonAttrs(reasonReads(targets, 0), false)...)...)
	started := time.Now()
	read := 0
	for read < len(targets) && s.budgetLeft() {
		done, err := s.creditBatch(ctx, targets[read:min(read+s.batchRequests, len(targets))], &res.StreamResult)
		if err != nil {
			return res, err
		}
		read += len(done) // a batch completes a prefix of its targets
	}
	res.pending = len(targets) - read
	res.reasons = reasonReads(targets, read)
	s.opts.Log.Info("credit histories read", append([]any{"customers", read, "left", res.pending}, reasonAttrs(res.reasons, true)...)...)
	if owed, attrs := unkept(res.reasons); owed > 0 {
		// Said where the operator looks: the budget or the rate cannot keep what the bounds promise.
		s.opts.Log.Warn("credit histories owed this run left unread: by the next run those customers' credit is older than the bounds promise",
			append(append([]any{"customers", owed}, attrs...), "refresh", s.opts.CreditRefresh,
				"remedy", "a larger request or time budget for the run, a faster request rate, or a longer credit refresh bound")...)
	}
	if err := s.sink.Flush(ctx); err != nil { // the last batches' merges
		return res, err
	}
	res.Merge = s.sink.Merged(entity.CreditLedger)
	res.Complete = res.pending == 0
	err = s.sink.RecordStream(ctx, syncdata.StreamStats{
		Stream: creditStream, Entity: string(entity.CreditLedger), Started: started, Finished: time.Now(),
		Pages: res.Pages, Records: res.Records, Requests: res.Pages, Complete: res.Complete,
	})
	s.progress(Progress{Stream: creditStream, Pages: res.Pages, Records: res.Records, Done: true})
	return res, err
}

// serviceAhead is how far the service's clock, as its records' dates show it, is ahead of the
// run's own times, for the credit targets: the run's offset when it set an ahead service clock
// aside and the lists stored records dated after this machine's clock (flagged now, the rest at
// the end of the run), 0 otherwise. Without such records the offset is the Date header's alone
// (a proxy's, over records dated right) and moves none of the service's dates.
func (s *syncer) serviceAhead(ctx context.Context) (time.Duration, error) {
	s.sink.ObservedAt() // the run's clock decided (a resumed run may not have needed it yet)
	ahead := s.clock.serviceAhead()
	if ahead <= 0 {
		return 0, nil
	}
	n, err := s.sink.FlagServiceClock(ctx, time.Now().Add(s.opts.MaxClockSkew), clockFlagNote(ahead))
	if err != nil {
		return 0, err
	}
	s.flaggedEarly = n
	if n == 0 {
		return 0, nil
	}
	return ahead, nil
}

// unkept counts the customers left unread whose reason the run owed (syncdata.CreditOwed), and
// names them by reason as log attributes.
func unkept(rs []ReasonReads) (int, []any) {
	n := 0
	var attrs []any
	for _, r := range rs {
		if syncdata.CreditOwed(r.Reason) && r.Read < r.Due {
			n += r.Due - r.Read
			attrs = append(attrs, r.Reason, r.Due-r.Read)
		}
	}
	return n, attrs
}

// reasonAttrs are log attributes, a reason each: the customers due, or read of due.
func reasonAttrs(rs []ReasonReads, read bool) []any {
	var out []any
	for _, r := range rs {
		if read {
			out = append(out, r.Reason, fmt.Sprintf("%d of %d", r.Read, r.Due))
		} else {
			out = append(out, r.Reason, r.Due)
		}
	}
	return out
}

// creditBatch fetches a batch of customers and queues the merge of their entries, followed by
// marking them fetched, as one write: the next batch's requests run while DuckDB merges this
// one. It returns the customers it completed, a prefix of targets: it stops launching new ones
// when the budget is spent or the batch is the sink's batch age old.
func (s *syncer) creditBatch(ctx context.Context, targets []syncdata.CreditTarget, res *StreamResult) ([]syncdata.CreditTarget, error) {
	var mu sync.Mutex
	var done []syncdata.CreditTarget
	batch := s.sink.Batch(entity.CreditLedger)
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(s.opts.Concurrency)
	started := time.Now()
	for i, t := range targets {
		if !s.budgetLeft() || (i > 0 && time.Since(started) > s.batchAge) {
			break
		}
		g.Go(func() error {
			if err := s.customerCredit(gctx, batch, t, res); err != nil {
				return fmt.Errorf("credit history of customer %s: %w", t.CustomerID, err)
			}
			mu.Lock()
			done = append(done, t)
			mu.Unlock()
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	return done, batch.CommitCredit(ctx, done)
}

func (s *syncer) customerCredit(ctx context.Context, batch BatchSink, t syncdata.CreditTarget, res *StreamResult) error {
	q := url.Values{
		"limit":     {strconv.Itoa(s.opts.PageSize)},
		"sortField": {"datetime"},
		"sortOrder": {"asc"},
	}
	if !t.Since.IsZero() {
		// never past the run's clock: a future-dated entry must not move the start beyond now
		since := t.Since.UTC()
		if now := s.sink.ObservedAt(); since.After(now) {
			since = now
		}
		since = s.clock.toService(since)
		q.Set("startDate", since.Format(time.RFC3339))
	}
	g := newGuard("GET "+creditHistoryPath+t.CustomerID, s.opts.MaxCreditPages, nil)
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
		if _, err := g.check(page, p); err != nil {
			return err
		}
		if err := s.flagRedactions(ctx, creditStream, creditHistoryPath+t.CustomerID, page, p); err != nil {
			return err
		}
		// bounded in bytes: a full batch is merged before this goroutine reads on
		if err := batch.Add(ctx, page, p.Items); err != nil {
			return err
		}
		s.count(creditStream, res, int64(len(p.Items)))
		if !p.HasMore || len(p.Items) == 0 {
			return nil
		}
	}
}

// creditHistoryPath names a customer's credit history in messages: its declared path, the
// customer's id appended.
var creditHistoryPath = mustDecl(entity.CreditLedger).IDPath()

// detailDef is one detail stream: it reads the entity named like the stream, one read per id
// at path + id.
type detailDef struct {
	stream string
	entity entity.Name
	path   string
}

// details are the detail reads: every entity declared so (internal/entity), in declaration order.
var details = func() []detailDef {
	var out []detailDef
	for _, d := range entity.All() {
		if d.Paging == entity.Detail {
			out = append(out, detailDef{string(d.Name), d.Name, d.IDPath()})
		}
	}
	return out
}()

// mustDecl is the declaration of an entity fetch reads with code of its own (the credit fan-out,
// the webhook history): one declared, or the package does not start.
func mustDecl(n entity.Name) *entity.Decl {
	d, ok := entity.Get(n)
	if !ok {
		panic("fetch: no declaration of entity " + string(n))
	}
	return d
}

// detailFanout reads the detail endpoint of records the warehouse has never detailed. The
// detail adds little that changes (owner, qty), so each record is detailed once, within budget.
func (s *syncer) detailFanout(ctx context.Context, d detailDef) (fanoutResult, error) {
	res := fanoutResult{StreamResult: StreamResult{Stream: d.stream}}
	ids, err := s.sink.DetailTargets(ctx, d.entity)
	if err != nil {
		return res, err
	}
	started := time.Now()
	for batch := 0; len(ids) > 0 && s.budgetLeft(); batch++ {
		got, err := s.detailBatch(ctx, d, batch, ids[:min(s.batchRequests, len(ids))], &res.StreamResult)
		if err != nil {
			return res, err
		}
		ids = ids[got:] // a batch completes a prefix of its ids
	}
	res.pending = len(ids)
	if err := s.sink.Flush(ctx); err != nil {
		return res, err
	}
	res.Merge = s.sink.Merged(d.entity)
	res.Complete = res.pending == 0
	err = s.sink.RecordStream(ctx, syncdata.StreamStats{
		Stream: d.stream, Entity: string(d.entity), Started: started, Finished: time.Now(),
		Pages: res.Pages, Records: res.Records, Requests: res.Pages, Complete: res.Complete,
	})
	s.progress(Progress{Stream: d.stream, Pages: res.Pages, Records: res.Records, Done: true})
	return res, err
}

func (s *syncer) detailBatch(ctx context.Context, d detailDef, batchNo int, ids []string, res *StreamResult) (int, error) {
	var mu sync.Mutex
	fetched := 0
	batch := s.sink.Batch(d.entity)
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(s.opts.Concurrency)
	started := time.Now()
	for i, id := range ids {
		if !s.budgetLeft() || (i > 0 && time.Since(started) > s.batchAge) {
			break
		}
		g.Go(func() error {
			if err := s.acquire(gctx); err != nil {
				return err
			}
			seg, err := api.PathSegment(id)
			if err != nil {
				s.release()
				return fmt.Errorf("%s: %w", d.stream, err)
			}
			raw, red, err := s.c.DetailRedacted(gctx, d.path+seg)
			s.release()
			switch {
			case notFound(err):
				// Gone since the list was read; the list stream marks it.
			case err != nil:
				return fmt.Errorf("%s %s: %w", d.stream, id, err)
			default:
				if red != nil {
					p := &api.ListPage{Redactions: []api.Redaction{*red}}
					if err := s.flagRedactions(gctx, d.stream, d.path+seg, 0, p); err != nil {
						return err
					}
				}
				if err := batch.Add(gctx, batchNo, []json.RawMessage{raw}); err != nil {
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
	return fetched, batch.Commit(ctx)
}

func notFound(err error) bool {
	var ae *api.APIError
	return errors.As(err, &ae) && ae.Status == http.StatusNotFound
}
