package fetch

import (
	"context"
	"encoding/json"
	"math"
	"sync"
	"time"

	"github.com/billsync/billsync/internal/api"
	"github.com/billsync/billsync/internal/warehouse"
)

// writer owns every warehouse call of a run. DuckDB reports concurrent updates of the same rows
// as transaction conflicts, so each table has one writer at a time: state writes and fan-out
// merges are queued to one goroutine, in order, and each list stream's batch merges run one
// after another on merge slots beside that queue (a stream is the only writer of its entity's
// table during the list phase; all streams only append to record_changes, which never
// conflicts). The buffered queue and the one-merge-per-stream rule let HTTP run ahead of DuckDB
// by a bounded amount (backpressure keeps memory flat).
type writer struct {
	b       *warehouse.Build
	run     warehouse.Run
	account string
	c       *api.Client

	ops      chan writeOp
	finished chan struct{}
	slots    chan struct{}   // list merges running
	merges   sync.WaitGroup  // list merges started, running or waiting for a slot
	runCtx   context.Context // the run's: a merge outlives the page request that started it

	mu  sync.Mutex
	err error // first asynchronous failure; later submissions return it

	observed time.Time // the run's observation time, fixed at the first loader; guarded by mu
}

const writerQueue = 16

// mergeSlots is how many list streams' merges run at once. A merge is single-threaded DuckDB
// work (the build runs DuckDB with one thread), so with one slot the list phase took as long
// as all its merges end to end while the other core idled; two keep both cores busy (three
// measured slower).
const mergeSlots = 2

func startWriter(ctx context.Context, b *warehouse.Build, run warehouse.Run, account string, c *api.Client) *writer {
	w := &writer{
		b: b, run: run, account: account, c: c,
		ops:      make(chan writeOp, writerQueue),
		finished: make(chan struct{}),
		slots:    make(chan struct{}, mergeSlots),
		runCtx:   ctx,
	}
	go w.loop(context.WithoutCancel(ctx))
	return w
}

// writeOp is one queued write; reply, when set, receives its outcome.
type writeOp struct {
	fn    func(context.Context) error
	reply chan<- error
}

// loop runs the queued writes in order. After the first failure the rest are skipped, and a
// caller waiting on a skipped write gets that failure instead of waiting forever.
func (w *writer) loop(ctx context.Context) {
	defer close(w.finished)
	for op := range w.ops {
		err := w.failed()
		if err == nil {
			if err = op.fn(ctx); err != nil {
				w.fail(err)
			}
		}
		if op.reply != nil {
			op.reply <- err
		}
	}
}

func (w *writer) fail(err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err == nil {
		w.err = err
	}
}

func (w *writer) failed() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}

// submit queues fn without waiting for it.
func (w *writer) submit(ctx context.Context, fn func(context.Context) error) error {
	return w.enqueue(ctx, writeOp{fn: fn})
}

func (w *writer) enqueue(ctx context.Context, op writeOp) error {
	if err := w.failed(); err != nil {
		return err
	}
	select {
	case w.ops <- op:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// call runs fn on the writer goroutine and waits for its result, or for the earlier failure
// that made the writer skip it.
func (w *writer) call(ctx context.Context, fn func(context.Context) error) error {
	reply := make(chan error, 1)
	if err := w.enqueue(ctx, writeOp{fn: fn, reply: reply}); err != nil {
		return err
	}
	select {
	case err := <-reply:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// flush waits until every queued write has run and reports the first failure.
func (w *writer) flush(ctx context.Context) error {
	return w.call(ctx, func(context.Context) error { return nil })
}

func (w *writer) stop() {
	w.merges.Wait()
	close(w.ops)
	<-w.finished
}

// startMerge merges l on a merge slot, beside the queue, and sends the outcome to q.reply. The
// merge waits for a slot under the run's context, not the caller's, which may be a page
// request's that ends before the merge starts. Like the queue, it skips the merge after any
// earlier failure, and a failed merge makes the writer skip what follows. The merge itself is
// not cancelled (neither is a queued write): a stop abandons the unpublished build whole,
// never half a transaction.
func (w *writer) startMerge(l *warehouse.Loader, full bool, q *queuedMerge) error {
	if err := w.failed(); err != nil {
		return err
	}
	w.merges.Add(1)
	go func() {
		defer w.merges.Done()
		q.reply <- w.runMerge(w.runCtx, l, full, q)
	}()
	return nil
}

func (w *writer) runMerge(ctx context.Context, l *warehouse.Loader, full bool, q *queuedMerge) error {
	select {
	case w.slots <- struct{}{}:
	case <-ctx.Done():
		l.Discard()
		return ctx.Err()
	}
	defer func() { <-w.slots }()
	if err := w.failed(); err != nil {
		l.Discard()
		return err
	}
	var err error
	if q.result, err = l.Merge(context.WithoutCancel(ctx), full); err != nil {
		w.fail(err)
	}
	return err
}

// observedAt is the run's notion of "now": the server's clock when it sent a Date header, so
// change history recorded against a simulated clock is in simulated time. Streams and the
// writer ask for it concurrently; the first asking fixes it.
func (w *writer) observedAt() time.Time {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.observed.IsZero() {
		w.observed = w.c.ServerTime()
		if w.observed.IsZero() {
			w.observed = time.Now()
		}
		w.observed = w.observed.UTC()
	}
	return w.observed
}

// newLoader opens a loader of e for this run. Loaders stage on their own connections, so any
// goroutine may open and fill one; merging it is the writer's.
func (w *writer) newLoader(ctx context.Context, e warehouse.Entity) (*warehouse.Loader, error) {
	return w.b.NewLoader(ctx, e, w.run.ID, w.account, w.observedAt())
}

// listBatch is how many records a stream stages before merging them: DuckDB holds at most two
// batches per stream (one staging, one merging), whatever the size of the list. It is DuckDB's
// row-group size: smaller batches leave a part-filled row group that the next checkpoint
// compresses again (measured at ~1M records: 50,000 per batch 60k records/s, 122,880 per
// batch 70k).
var listBatch = 122_880

// batcher stages a stream's pages and merges every listBatch records. Staging (DuckDB's
// appender on the loader's own connection and temp table) runs on the stream's goroutines, in
// parallel with merges. A full batch's merge starts on a merge slot and the stream goes on
// paging into a new loader; a stream has at most one merge pending, so its merges run in fetch
// order and DuckDB holds at most two batches of it. The first loader, and with it the run's
// observation time, comes into being only after the run's first response has arrived with the
// server's Date header. Deletions are decided once, after the whole list, by an empty full merge
// (finish).
type batcher struct {
	w       *writer
	e       warehouse.Entity
	mu      sync.Mutex // page goroutines add concurrently
	l       *warehouse.Loader
	staged  int
	pending *queuedMerge
	merged  warehouse.MergeResult
}

type queuedMerge struct {
	reply  chan error
	result warehouse.MergeResult // set before the reply
}

func (b *batcher) add(ctx context.Context, page int, items []json.RawMessage) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.l == nil {
		l, err := b.w.newLoader(ctx, b.e)
		if err != nil {
			return err
		}
		b.l = l
	}
	for i, it := range items {
		if err := b.l.Add(page, i, it); err != nil {
			return err
		}
	}
	b.staged += len(items)
	if b.staged >= listBatch {
		return b.queueLocked(ctx, false)
	}
	return nil
}

// flush merges what is staged and waits for it.
func (b *batcher) flush(ctx context.Context) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if err := b.queueLocked(ctx, false); err != nil {
		return err
	}
	return b.waitLocked(ctx)
}

// finish merges what is staged and, when the stream saw the whole list, marks the rows no merge
// of this run saw as deleted upstream.
func (b *batcher) finish(ctx context.Context, full bool) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if err := b.queueLocked(ctx, false); err != nil {
		return err
	}
	if err := b.waitLocked(ctx); err != nil || !full {
		return err
	}
	l, err := b.w.newLoader(ctx, b.e)
	if err != nil {
		return err
	}
	b.l = l
	if err := b.queueLocked(ctx, true); err != nil {
		return err
	}
	return b.waitLocked(ctx)
}

// queueLocked starts merging the current loader once the stream's previous merge has finished.
func (b *batcher) queueLocked(ctx context.Context, full bool) error {
	if b.l == nil {
		return nil
	}
	if err := b.waitLocked(ctx); err != nil {
		return err
	}
	l := b.l
	b.l, b.staged = nil, 0
	q := &queuedMerge{reply: make(chan error, 1)}
	if err := b.w.startMerge(l, full, q); err != nil {
		l.Discard()
		return err
	}
	b.pending = q
	return nil
}

// waitLocked waits for the stream's queued merge, if any.
func (b *batcher) waitLocked(ctx context.Context) error {
	if b.pending == nil {
		return nil
	}
	select {
	case err := <-b.pending.reply:
		b.merged = addMerge(b.merged, b.pending.result)
		b.pending = nil
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// batchPages collects a fan-out batch's pages in memory (small responses, about 20 MB for a
// full batch) so that staging and merging them is one queued write. It holds at most a byte limit:
// the add that reaches it takes the pages out for an immediate merge.
type batchPages struct {
	mu    sync.Mutex
	pages []fetchedPage
	bytes int64
}

type fetchedPage struct {
	page  int
	items []json.RawMessage
}

// add keeps a page; when the pages held reach limit bytes it hands them all back (and holds none).
func (p *batchPages) add(page int, items []json.RawMessage, limit int64) *batchPages {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.pages = append(p.pages, fetchedPage{page, items})
	for _, it := range items {
		p.bytes += int64(len(it))
	}
	if limit <= 0 || p.bytes < limit {
		return nil
	}
	full := &batchPages{pages: p.pages, bytes: p.bytes}
	p.pages, p.bytes = nil, 0
	return full
}

// mergeNow stages and merges pages on the writer and waits: the caller reads no further until the
// bytes it held are in DuckDB's hands.
func (w *writer) mergeNow(ctx context.Context, e warehouse.Entity, pages *batchPages, into *warehouse.MergeResult) error {
	return w.call(ctx, func(ctx context.Context) error {
		r, err := w.stageMerge(ctx, e, pages)
		*into = addMerge(*into, r) // on the writer goroutine, like every batch's tally
		return err
	})
}

// mergeBatch queues, without waiting, one write that stages the pages into a new loader of e,
// merges them, adds the outcome to into and then, after a successful merge, runs then. Failures
// surface at the writer's next call or flush.
func (w *writer) mergeBatch(ctx context.Context, e warehouse.Entity, pages *batchPages, into *warehouse.MergeResult,
	then func(context.Context) error) error {
	return w.submit(ctx, func(ctx context.Context) error {
		r, err := w.stageMerge(ctx, e, pages)
		*into = addMerge(*into, r)
		if err != nil || then == nil {
			return err
		}
		return then(ctx)
	})
}

// stageMerge stages pages into a new loader of e and merges them; it runs on the writer.
func (w *writer) stageMerge(ctx context.Context, e warehouse.Entity, pages *batchPages) (warehouse.MergeResult, error) {
	l, err := w.newLoader(ctx, e)
	if err != nil {
		return warehouse.MergeResult{}, err
	}
	for _, p := range pages.pages {
		for i, it := range p.items {
			if err := l.Add(p.page, i, it); err != nil {
				l.Discard()
				return warehouse.MergeResult{}, err
			}
		}
	}
	return l.Merge(ctx, false)
}

func (w *writer) seenInRun(ctx context.Context, e warehouse.Entity) (n int64, err error) {
	err = w.call(ctx, func(ctx context.Context) error {
		n, err = w.b.SeenInRun(ctx, e, w.account, w.run.ID)
		return err
	})
	return n, err
}

func (w *writer) streamDone(ctx context.Context, stream string) (done bool, err error) {
	err = w.call(ctx, func(ctx context.Context) error {
		done, err = w.b.StreamDone(ctx, w.run.ID, stream)
		return err
	})
	return done, err
}

func (w *writer) recordStream(ctx context.Context, s warehouse.StreamStats) error {
	return w.call(ctx, func(ctx context.Context) error { return w.b.RecordStream(ctx, w.run.ID, s) })
}

func (w *writer) cursor(ctx context.Context, stream string) (v string, err error) {
	err = w.call(ctx, func(ctx context.Context) error {
		v, err = w.b.Cursor(ctx, w.account, stream)
		return err
	})
	return v, err
}

func (w *writer) setCursor(ctx context.Context, stream, v string) error {
	return w.call(ctx, func(ctx context.Context) error { return w.b.SetCursor(ctx, w.account, stream, v, w.run.ID) })
}

func (w *writer) creditTargets(ctx context.Context, overlap, refresh time.Duration, hints []warehouse.CreditHint) (t []warehouse.CreditTarget, err error) {
	err = w.call(ctx, func(ctx context.Context) error {
		p := warehouse.CreditPlan{Now: w.observedAt(), Overlap: overlap, Refresh: refresh, Hints: hints}
		t, err = w.b.CreditTargets(ctx, w.account, p, math.MaxInt32)
		return err
	})
	return t, err
}

func (w *writer) detailTargets(ctx context.Context, e warehouse.Entity) (ids []string, err error) {
	err = w.call(ctx, func(ctx context.Context) error {
		ids, err = w.b.DetailTargets(ctx, w.account, e, math.MaxInt32)
		return err
	})
	return ids, err
}

func (w *writer) recordConflicts(ctx context.Context, e warehouse.Entity, stream string, cs []Conflict) error {
	rows := make([]warehouse.Conflict, len(cs))
	for i, c := range cs {
		rows[i] = warehouse.Conflict{ID: c.ID, Path: c.Path, FirstPage: c.FirstPage, FirstIdx: c.FirstIdx, FirstRaw: c.FirstRaw,
			SecondPage: c.SecondPage, SecondIdx: c.SecondIdx, SecondRaw: c.SecondRaw}
	}
	return w.call(ctx, func(ctx context.Context) error {
		return w.b.RecordConflicts(ctx, w.account, w.run.ID, e, stream, w.observedAt(), rows)
	})
}
