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

// writer owns every warehouse call of a run. DuckDB allows one writer per table at a time and
// reports concurrent updates of the same rows as transaction conflicts; funnelling all writes
// through one goroutine makes that impossible, and the buffered queue lets HTTP run ahead of
// DuckDB by a bounded number of pages (backpressure keeps memory flat).
type writer struct {
	b       *warehouse.Build
	run     warehouse.Run
	account string
	c       *api.Client

	ops      chan func(context.Context) error
	finished chan struct{}

	mu  sync.Mutex
	err error // first asynchronous failure; later submissions return it

	observed time.Time // the run's observation time, fixed at the first loader
}

const writerQueue = 16

func startWriter(ctx context.Context, b *warehouse.Build, run warehouse.Run, account string, c *api.Client) *writer {
	w := &writer{
		b: b, run: run, account: account, c: c,
		ops:      make(chan func(context.Context) error, writerQueue),
		finished: make(chan struct{}),
	}
	go w.loop(context.WithoutCancel(ctx))
	return w
}

func (w *writer) loop(ctx context.Context) {
	defer close(w.finished)
	for op := range w.ops {
		if w.failed() != nil {
			continue
		}
		if err := op(ctx); err != nil {
			w.fail(err)
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
	if err := w.failed(); err != nil {
		return err
	}
	select {
	case w.ops <- fn:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// call runs fn on the writer goroutine and waits for its result.
func (w *writer) call(ctx context.Context, fn func(context.Context) error) error {
	reply := make(chan error, 1)
	if err := w.submit(ctx, func(ctx context.Context) error {
		err := fn(ctx)
		reply <- err
		return err
	}); err != nil {
		return err
	}
	select {
	case err := <-reply:
		return err
	case <-w.finished:
		return w.failed()
	case <-ctx.Done():
		return ctx.Err()
	}
}

// flush waits until every queued write has run and reports the first failure.
func (w *writer) flush(ctx context.Context) error {
	return w.call(ctx, func(context.Context) error { return nil })
}

func (w *writer) stop() {
	close(w.ops)
	<-w.finished
}

// observedAt is the run's notion of "now": the server's clock when it sent a Date header, so
// change history recorded against a simulated clock is in simulated time.
func (w *writer) observedAt() time.Time {
	if w.observed.IsZero() {
		w.observed = w.c.ServerTime()
		if w.observed.IsZero() {
			w.observed = time.Now()
		}
		w.observed = w.observed.UTC()
	}
	return w.observed
}

func (w *writer) loader(ctx context.Context, e warehouse.Entity) (*warehouse.Loader, error) {
	var l *warehouse.Loader
	err := w.call(ctx, func(ctx context.Context) (err error) {
		l, err = w.b.NewLoader(ctx, e, w.run.ID, w.account, w.observedAt())
		return err
	})
	return l, err
}

// lazyLoader opens its loader on first use. Streams use it so that a loader, and with it the
// run's observation time, comes into being only after the run's first response has arrived
// with the server's Date header.
type lazyLoader struct {
	w  *writer
	e  warehouse.Entity
	mu sync.Mutex
	l  *warehouse.Loader
}

func (z *lazyLoader) get(ctx context.Context) (*warehouse.Loader, error) {
	z.mu.Lock()
	defer z.mu.Unlock()
	if z.l == nil {
		l, err := z.w.loader(ctx, z.e)
		if err != nil {
			return nil, err
		}
		z.l = l
	}
	return z.l, nil
}

func (w *writer) add(ctx context.Context, l *warehouse.Loader, page int, items []json.RawMessage) error {
	return w.submit(ctx, func(context.Context) error {
		for i, it := range items {
			if err := l.Add(page, i, it); err != nil {
				return err
			}
		}
		return nil
	})
}

func (w *writer) distinct(ctx context.Context, l *warehouse.Loader) (n int64, err error) {
	err = w.call(ctx, func(ctx context.Context) error {
		n, err = l.DistinctIDs(ctx)
		return err
	})
	return n, err
}

func (w *writer) merge(ctx context.Context, l *warehouse.Loader, full bool) (r warehouse.MergeResult, err error) {
	err = w.call(ctx, func(ctx context.Context) error {
		r, err = l.Merge(ctx, full)
		return err
	})
	return r, err
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

func (w *writer) creditTargets(ctx context.Context, overlap, refresh time.Duration) (t []warehouse.CreditTarget, err error) {
	err = w.call(ctx, func(ctx context.Context) error {
		t, err = w.b.CreditTargets(ctx, w.account, overlap, w.observedAt().Add(-refresh), math.MaxInt32)
		return err
	})
	return t, err
}

func (w *writer) markCreditFetched(ctx context.Context, customers []string) error {
	return w.call(ctx, func(ctx context.Context) error {
		return w.b.MarkCreditFetchedBatch(ctx, w.account, customers, w.observedAt(), w.run.ID)
	})
}

func (w *writer) detailTargets(ctx context.Context, e warehouse.Entity) (ids []string, err error) {
	err = w.call(ctx, func(ctx context.Context) error {
		ids, err = w.b.DetailTargets(ctx, w.account, e, math.MaxInt32)
		return err
	})
	return ids, err
}
