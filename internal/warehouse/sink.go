package warehouse

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"time"

	"github.com/billsync/billsync/internal/entity"
	"github.com/billsync/billsync/internal/syncdata"
)

// The write path's knobs, in one place. Memory and speed trade against each other here; why each
// value is what it is: docs/sync.md ("One writer per table"), the figures docs/performance.md.
const (
	// DefaultListBatch is how many records a list stages before merging them: DuckDB holds at
	// most one batch per list (staging or merging), whatever the size of the list. It is the
	// build's row group size: a smaller batch leaves a part-filled row group that the next
	// checkpoint compresses again, a larger one is more than the merge's memory.
	DefaultListBatch = DefaultRowGroupSize

	// relistBatch is a list's batch once its table holds the account's rows from an earlier
	// run. Each merge on the list path then compares its records with the stored ones, a
	// join that reads the stored raw JSON of the whole table, so fewer, larger batches cost
	// less; and the few rows such a merge writes fill no row group anyway.
	relistBatch = 122_880

	// DefaultFanoutBatchBytes bounds the responses a fan-out batch holds before they are merged:
	// a normal batch is about 20 MB, and a history that never ends is merged in pieces of this
	// size while its guard counts its pages, so memory stays flat whatever the server sends.
	DefaultFanoutBatchBytes = 32 << 20

	// A fan-out batch of customers (or detail records) is merged and marked done together: a
	// killed run loses at most one batch of work. A batch closes at DefaultFanoutBatchRequests
	// requests or after DefaultFanoutBatchAge, whichever comes first (fetch closes it: it
	// launches the requests). Unthrottled, large batches keep DuckDB's fixed cost per merge
	// (mostly preparing statements) small beside the requests, at the price of the work a kill
	// loses and of the responses waiting in memory for their merge; at the real 20 requests a
	// minute the age closes a batch first.
	DefaultFanoutBatchRequests = 20_000
	DefaultFanoutBatchAge      = 30 * time.Second

	// mergeSlots is how many lists' merges run at once. A merge is single-threaded DuckDB work
	// (the build runs DuckDB with one thread), so with one slot the list phase took as long as
	// all its merges end to end while the other core idled; two keep both cores busy, and a
	// third only competes for them.
	mergeSlots = 2

	// writerQueue is how many writes may wait for the writer goroutine: HTTP runs ahead of
	// DuckDB by this much before a stream blocks.
	writerQueue = 16
)

// Sink is the one writer of a build while a sync runs: every write of the run (staged records,
// merges, deletion marks, streams, cursors, credit reads, conflicts) and every read that must
// see them goes through it, so the rule DuckDB imposes (the later of two transactions updating
// the same rows fails with "Conflict on tuple deletion") is kept here, by construction:
//
//   - a list (List) stages its pages on its own connection and merges every ListBatch records
//     on one of mergeSlots merge slots, one merge of it at a time: during the list phase a list
//     is the only writer of its entity's tables, and all lists only append to record_changes,
//     which never conflicts;
//   - everything else (state, cursors, fan-out batches, whose details fill rows the lists
//     wrote) is queued to one writer goroutine and runs in order.
//
// After a failed write or merge the writes still to come are skipped with that failure. A build
// has at most one open sink.
type Sink struct {
	b   *Build
	run syncdata.Run
	now func() time.Time

	ops       chan writeOp
	finished  chan struct{}
	slots     chan struct{}   // list merges running
	merges    sync.WaitGroup  // list merges started, running or waiting for a slot
	runCtx    context.Context // the run's: a merge outlives the page request that started it
	closeOnce sync.Once

	mu       sync.Mutex
	err      error                                // first asynchronous failure; later submissions return it
	observed time.Time                            // the run's observation time, fixed when first needed
	merged   map[entity.Name]syncdata.MergeResult // what this run's merges did, per entity

	// bound is set from within now (under mu), so it has a lock of its own
	boundMu sync.Mutex
	bound   syncdata.TimeBound
}

// StartSink starts (or resumes) account's run in the build and returns its sink. now gives the
// run's observation time: it is called once, when the sink first needs it (the first staged
// record, or a query that needs the time), so a caller passing the server's clock gets the
// time of a response. A zero time or a nil now means the local clock. Close the sink when done.
func (b *Build) StartSink(ctx context.Context, account string, startedAt time.Time, now func() time.Time) (*Sink, error) {
	b.mu.Lock()
	busy := b.sink != nil
	b.mu.Unlock()
	if busy {
		return nil, fmt.Errorf("start sink for %s: the build already has an open sink", account)
	}
	run, err := b.startRun(ctx, account, startedAt)
	if err != nil {
		return nil, b.explainMemory(err)
	}
	s := &Sink{
		b: b, run: run, now: now,
		ops:      make(chan writeOp, writerQueue),
		finished: make(chan struct{}),
		slots:    make(chan struct{}, mergeSlots),
		runCtx:   ctx,
		merged:   map[entity.Name]syncdata.MergeResult{},
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.sink != nil {
		return nil, fmt.Errorf("start sink for %s: the build already has an open sink", account)
	}
	b.sink = s
	go s.loop(context.WithoutCancel(ctx))
	return s, nil
}

// Run is the sink's run.
func (s *Sink) Run() syncdata.Run { return s.run }

// ObservedAt is the run's notion of "now", fixed the first time anything asks.
func (s *Sink) ObservedAt() time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.observed.IsZero() {
		if s.now != nil {
			s.observed = s.now()
		}
		if s.observed.IsZero() {
			s.observed = time.Now()
		}
		s.observed = s.observed.UTC()
	}
	return s.observed
}

// SetRunClock records the clock the run decided to store its times by, for a resumed attempt to
// apply the same. It writes the run's own row, which nothing else writes while the run is open,
// so it may be called from any goroutine, the writer's included (ObservedAt's now runs there).
func (s *Sink) SetRunClock(c syncdata.RunClock) error {
	return s.b.setRunClock(context.WithoutCancel(s.runCtx), s.run.ID, c)
}

// RepairFutureTimes forgets the run's account's credit read times and webhook cursor stored
// after latest (Build.repairFutureTimes) and says how many of each it forgot.
func (s *Sink) RepairFutureTimes(ctx context.Context, latest time.Time) (credit, cursors int64, err error) {
	err = s.call(ctx, func(ctx context.Context) error {
		credit, cursors, err = s.b.repairFutureTimes(ctx, s.run.Account, latest)
		return err
	})
	return credit, cursors, err
}

// AheadClockSeen is the latest the service's clock read in an earlier run of the account that
// stored records it dated ahead of this machine's clock; zero when none (Build.aheadClockSeen).
func (s *Sink) AheadClockSeen(ctx context.Context) (t time.Time, err error) {
	err = s.call(ctx, func(ctx context.Context) error {
		t, err = s.b.aheadClockSeen(ctx, s.run.Account)
		return err
	})
	return t, err
}

// FanoutBatch is when a fan-out batch closes: after this many requests or this long.
func (s *Sink) FanoutBatch() (requests int, age time.Duration) {
	return s.b.fanoutBatchRequests, s.b.fanoutBatchAge
}

// Merged is what this run's merges of e did so far (call after Flush for the whole of it).
func (s *Sink) Merged(e entity.Name) syncdata.MergeResult {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.merged[e]
}

func (s *Sink) tally(e entity.Name, r syncdata.MergeResult) {
	s.mu.Lock()
	defer s.mu.Unlock()
	m := s.merged[e]
	m.Inserted += r.Inserted
	m.Updated += r.Updated
	m.Unchanged += r.Unchanged
	m.Deleted += r.Deleted
	m.Restored += r.Restored
	s.merged[e] = m
}

// Close waits for the merges and writes under way, then ends the sink; a second Close does
// nothing. It does not report their failure: Flush does.
func (s *Sink) Close() {
	s.closeOnce.Do(func() {
		s.merges.Wait()
		close(s.ops)
		<-s.finished
		s.b.mu.Lock()
		if s.b.sink == s {
			s.b.sink = nil
		}
		s.b.mu.Unlock()
	})
}

// Flush waits until every queued write has run and reports the first failure.
func (s *Sink) Flush(ctx context.Context) error {
	return s.call(ctx, func(context.Context) error { return nil })
}

// writeOp is one queued write; reply, when set, receives its outcome.
type writeOp struct {
	fn    func(context.Context) error
	reply chan<- error
}

// loop runs the queued writes in order. After the first failure the rest are skipped, and a
// caller waiting on a skipped write gets that failure instead of waiting forever.
func (s *Sink) loop(ctx context.Context) {
	defer close(s.finished)
	for op := range s.ops {
		err := s.failed()
		if err == nil {
			if err = s.b.explainMemory(op.fn(ctx)); err != nil {
				err = s.fail(err)
			}
		}
		if op.reply != nil {
			op.reply <- err
		}
	}
}

// fail records the writer's first failure and returns err as a WriteError.
func (s *Sink) fail(err error) error {
	werr := &syncdata.WriteError{Err: err}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err == nil {
		s.err = werr
	}
	return werr
}

func (s *Sink) failed() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

// submit queues fn without waiting for it.
func (s *Sink) submit(ctx context.Context, fn func(context.Context) error) error {
	return s.enqueue(ctx, writeOp{fn: fn})
}

func (s *Sink) enqueue(ctx context.Context, op writeOp) error {
	if err := s.failed(); err != nil {
		return err
	}
	select {
	case s.ops <- op:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// call runs fn on the writer goroutine and waits for its result, or for the earlier failure
// that made the writer skip it.
func (s *Sink) call(ctx context.Context, fn func(context.Context) error) error {
	reply := make(chan error, 1)
	if err := s.enqueue(ctx, writeOp{fn: fn, reply: reply}); err != nil {
		return err
	}
	select {
	case err := <-reply:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// onSlot runs fn on a merge slot, beside the queue, and sends its outcome to reply. It waits
// for a slot under the run's context, not the caller's, which may be a page request's that ends
// before the merge starts. Like the queue, it skips fn after any earlier failure (calling skip),
// and a failure of fn makes the sink skip what follows. fn itself is not cancelled (neither is
// a queued write): a stop abandons the unpublished build whole, never half a transaction.
func (s *Sink) onSlot(fn func(context.Context) error, skip func(), reply chan<- error) error {
	if err := s.failed(); err != nil {
		return err
	}
	s.merges.Add(1)
	go func() {
		defer s.merges.Done()
		reply <- s.runOnSlot(fn, skip)
	}()
	return nil
}

func (s *Sink) runOnSlot(fn func(context.Context) error, skip func()) error {
	select {
	case s.slots <- struct{}{}:
	case <-s.runCtx.Done():
		skip()
		return s.runCtx.Err()
	}
	defer func() { <-s.slots }()
	if err := s.failed(); err != nil {
		skip()
		return err
	}
	err := s.b.explainMemory(fn(context.WithoutCancel(s.runCtx)))
	if err != nil {
		err = s.fail(err)
	}
	return err
}

// newLoader opens a loader of e for this run. Loaders stage on their own connections, so any
// goroutine may open and fill one; merging it is the sink's.
func (s *Sink) newLoader(ctx context.Context, e entity.Name) (*loader, error) {
	l, err := s.b.newLoader(ctx, e, s.run.ID, s.run.Account, s.ObservedAt())
	if l != nil {
		l.bound = s.TimeBound()
	}
	return l, err
}

// SetTimeBound sets the latest time a record of the run may carry (fetch's clock rule decides
// it with the observation time); unset, a day after the observation time.
func (s *Sink) SetTimeBound(b syncdata.TimeBound) {
	s.boundMu.Lock()
	defer s.boundMu.Unlock()
	s.bound = b
}

// TimeBound is the run's bound of the records' times, zero when none was set.
func (s *Sink) TimeBound() syncdata.TimeBound {
	s.boundMu.Lock()
	defer s.boundMu.Unlock()
	return s.bound
}

// merge merges l, counting what it did.
func (s *Sink) merge(ctx context.Context, l *loader) error {
	r, err := l.Merge(ctx)
	s.tally(l.entity, r)
	return err
}

// StreamDone reports whether the run already completed stream (resume skips it).
func (s *Sink) StreamDone(ctx context.Context, stream string) (done bool, err error) {
	err = s.call(ctx, func(ctx context.Context) error {
		done, err = s.b.streamDone(ctx, s.run.ID, stream)
		return err
	})
	return done, err
}

// RecordStream stores a stream's statistics, replacing an earlier record of it in the run.
func (s *Sink) RecordStream(ctx context.Context, st syncdata.StreamStats) error {
	return s.call(ctx, func(ctx context.Context) error { return s.b.recordStream(ctx, s.run.ID, st) })
}

// Cursor returns the stored cursor of the run's account's stream, "" when none.
func (s *Sink) Cursor(ctx context.Context, stream string) (v string, err error) {
	err = s.call(ctx, func(ctx context.Context) error {
		v, err = s.b.cursor(ctx, s.run.Account, stream)
		return err
	})
	return v, err
}

// SetCursor stores the cursor of the run's account's stream.
func (s *Sink) SetCursor(ctx context.Context, stream, v string) error {
	return s.call(ctx, func(ctx context.Context) error { return s.b.setCursor(ctx, s.run.Account, stream, v, s.run.ID) })
}

// CreditTargets lists every customer whose credit history is due under p at the run's
// observation time (p.Now is set here), most important first.
func (s *Sink) CreditTargets(ctx context.Context, p syncdata.CreditPlan) (t []syncdata.CreditTarget, err error) {
	err = s.call(ctx, func(ctx context.Context) error {
		p.Now = s.ObservedAt()
		t, err = s.b.creditTargets(ctx, s.run.Account, p, math.MaxInt32)
		return err
	})
	return t, err
}

// DetailTargets lists the ids of records that were listed but never read through their detail
// endpoint; e is ProductDetails or PaymentRequestDetails.
func (s *Sink) DetailTargets(ctx context.Context, e entity.Name) (ids []string, err error) {
	err = s.call(ctx, func(ctx context.Context) error {
		ids, err = s.b.detailTargets(ctx, s.run.Account, e, math.MaxInt32)
		return err
	})
	return ids, err
}

// NewestCreated is the latest created_at among the rows of e's table this run's merges saw
// (ok false when there is none), for a cursor that moves with the records read. The time is
// the one the merge parsed and validated: records are parsed once, in SQL.
func (s *Sink) NewestCreated(ctx context.Context, e entity.Name) (t time.Time, ok bool, err error) {
	def, known := entityDefs[e]
	if !known {
		return t, false, fmt.Errorf("newest created: unknown entity %q", e)
	}
	err = s.call(ctx, func(ctx context.Context) error {
		t, ok, err = s.b.newestCreated(ctx, def.table, s.run.Account, s.run.ID)
		return err
	})
	return t, ok, err
}

// LastRead is how many records the account's last complete read of stream returned in a run
// that was published (-1 when there is none): a list that announces nothing is bounded by it.
func (s *Sink) LastRead(ctx context.Context, stream string) (n int64, err error) {
	err = s.call(ctx, func(ctx context.Context) error {
		var v sql.NullInt64
		err := s.b.db.QueryRowContext(ctx, stateSQL.Get("last_read"), s.run.Account, stream).Scan(&v)
		if errors.Is(err, sql.ErrNoRows) {
			n = -1
			return nil
		}
		n = v.Int64
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("last read of %s: %w", stream, err)
	}
	return n, nil
}

// FinishRun waits for every write of the run, then closes it with its outcome and totals.
func (s *Sink) FinishRun(ctx context.Context, st syncdata.RunStats) error {
	return s.call(ctx, func(ctx context.Context) error { return s.b.finishRun(ctx, s.run.ID, st) })
}

// List stages one list stream's records of entity e: it merges every ListBatch records and,
// when a pass read the whole list, marks the rows no merge of the run saw as deleted upstream.
// The stream's pages may be added from several goroutines.
type List struct {
	s   *Sink
	e   entity.Name
	def *entityDef

	batch int // records per merge (listBatch)

	mu      sync.Mutex // page goroutines add concurrently
	l       *loader
	staged  int
	pending chan error // the list's merge under way, if any
	passes  int
	last    syncdata.ListEnd
	whole   bool   // the last pass read the whole list
	doubt   string // why it did not, when it did not
}

// List starts staging a list of e.
func (s *Sink) List(e entity.Name) (*List, error) {
	def, ok := entityDefs[e]
	if !ok || def.detail {
		return nil, fmt.Errorf("list: %q is not a listed entity", e)
	}
	batch, err := s.listBatch(def)
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", e, err)
	}
	return &List{s: s, e: e, def: def, batch: batch}, nil
}

// listBatch is the batch size of a list of def: the build's (one row group) while the account's
// first sync of the table is under way, relistBatch once the table holds the account's rows from
// an earlier run. A size set in BuildOptions holds for both.
func (s *Sink) listBatch(def *entityDef) (int, error) {
	if s.b.listBatchSet {
		return s.b.listBatch, nil
	}
	var earlier bool
	if err := s.b.db.QueryRowContext(s.runCtx, def.sql["stored_before"], s.run.Account, s.run.ID).Scan(&earlier); err != nil {
		return 0, err
	}
	if earlier {
		return relistBatch, nil
	}
	return s.b.listBatch, nil
}

// Add stages a page's records; page locates them in error messages. The first loader, and with
// it the run's observation time, comes into being only with the first records (after the run's
// first response has arrived with the server's Date header). A full batch's merge starts on a
// merge slot and Add waits for it before the list stages on into a new loader, so its merges run
// in fetch order and DuckDB holds at most one batch of it. Staging a second batch while the first
// waited for a slot and merged held up to 14 batches of the 7 lists in DuckDB, beyond its memory
// limit: spilling them to temp files and reading them back cost more than the pages waiting.
//
// A batch holds exactly ListBatch records, a page's rest going to the next batch: closing the
// batch after the page that crossed the bound made it one row group and a few records more,
// leaving a small row group behind every merge.
func (li *List) Add(ctx context.Context, page int, items []json.RawMessage) error {
	li.mu.Lock()
	defer li.mu.Unlock()
	for first := 0; first < len(items); {
		if li.l == nil {
			l, err := li.s.newLoader(ctx, li.e)
			if err != nil {
				return err
			}
			li.l = l
		}
		end := min(len(items), first+li.batch-li.staged)
		for i := first; i < end; i++ {
			if err := li.l.Add(page, i, items[i]); err != nil {
				return err
			}
		}
		li.staged += end - first
		first = end
		if li.staged >= li.batch {
			if err := li.queueLocked(ctx); err != nil {
				return err
			}
			if err := li.waitLocked(ctx); err != nil {
				return err
			}
		}
	}
	return nil
}

// EndPass merges what is staged and says whether the pass read the whole list: the server's
// count held still, as many distinct records arrived (over all the run's merges) as it
// announced, and no id came with two contents. A pass that did not is logged; the caller may
// page the list again (merges de-duplicate) and end that pass too.
func (li *List) EndPass(ctx context.Context, end syncdata.ListEnd) (whole bool, err error) {
	li.mu.Lock()
	defer li.mu.Unlock()
	if !li.def.deletes {
		return false, fmt.Errorf("end pass: %s is incremental, its lists are never whole", li.e)
	}
	if err := li.queueLocked(ctx); err != nil {
		return false, err
	}
	if err := li.waitLocked(ctx); err != nil {
		return false, err
	}
	var seen int64
	err = li.s.call(ctx, func(ctx context.Context) error {
		seen, err = li.s.b.seenInRun(ctx, li.e, li.s.run.Account, li.s.run.ID)
		return err
	})
	if err != nil {
		return false, err
	}
	li.passes++
	li.last = end
	li.whole = end.Stable && seen >= end.Expected && len(end.Conflicts) == 0 && len(end.Doubts) == 0
	switch {
	case len(end.Doubts) > 0:
		li.doubt = "not read whole, nothing marked deleted: " + strings.Join(end.Doubts, "; ")
		li.s.b.log.Warn("list envelope not believed: nothing marked deleted from it", "stream", end.Stream,
			"pass", li.passes, "distinct", seen, "doubts", strings.Join(end.Doubts, "; "))
	case !li.whole:
		// Conflicting duplicates alone are recorded as such (Finish), and said by the caller.
		li.doubt = ""
		if !end.Stable || seen < end.Expected {
			li.doubt = fmt.Sprintf("not read whole, nothing marked deleted: %d distinct records of the %d announced, the count stable %t",
				seen, end.Expected, end.Stable)
		}
		li.s.b.log.Warn("list changed while paging", "stream", end.Stream, "pass", li.passes,
			"distinct", seen, "expected", end.Expected, "conflicting_duplicates", len(end.Conflicts))
	default:
		li.doubt = ""
	}
	return li.whole, nil
}

// Doubt says why the list's last pass was not read whole, "" when it was.
func (li *List) Doubt() string {
	li.mu.Lock()
	defer li.mu.Unlock()
	return li.doubt
}

// Finish merges what is staged, records the conflicting duplicates of the last pass (the last
// version read stays, the merges' rule) and, when the last pass read the whole list, marks the
// rows no merge of this run saw as deleted upstream: its own step, after every merge of the
// list, on a merge slot.
func (li *List) Finish(ctx context.Context) error {
	li.mu.Lock()
	defer li.mu.Unlock()
	if err := li.queueLocked(ctx); err != nil {
		return err
	}
	if err := li.waitLocked(ctx); err != nil {
		return err
	}
	// The list's merges are done: its id hashes are the direct path's no more (direct.go).
	li.s.b.forgetDirectIDs(entityDefs[li.e].table, li.s.run.Account, li.s.run.ID)
	if cs := li.last.Conflicts; len(cs) > 0 {
		err := li.s.call(ctx, func(ctx context.Context) error {
			return li.s.b.recordConflicts(ctx, li.s.run.Account, li.s.run.ID, li.e, li.last.Stream, li.s.ObservedAt(), cs)
		})
		if err != nil {
			return err
		}
		li.s.b.log.Warn("conflicting duplicates kept as last read", "stream", li.last.Stream, "count", len(cs),
			"first_id", cs[0].ID, "table", "data_quality_conflicts")
	}
	if !li.whole {
		return nil
	}
	reply := make(chan error, 1)
	mark := func(ctx context.Context) error {
		n, err := li.s.b.markDeleted(ctx, li.e, li.s.run.Account, li.s.run.ID, li.s.ObservedAt())
		li.s.tally(li.e, syncdata.MergeResult{Deleted: n})
		return err
	}
	if err := li.s.onSlot(mark, func() {}, reply); err != nil {
		return err
	}
	li.pending = reply
	return li.waitLocked(ctx)
}

// queueLocked starts merging the current loader once the list's previous merge has finished.
func (li *List) queueLocked(ctx context.Context) error {
	if li.l == nil {
		return nil
	}
	if err := li.waitLocked(ctx); err != nil {
		return err
	}
	l := li.l
	li.l, li.staged = nil, 0
	reply := make(chan error, 1)
	if err := li.s.onSlot(func(ctx context.Context) error { return li.s.merge(ctx, l) }, l.Discard, reply); err != nil {
		l.Discard()
		return err
	}
	li.pending = reply
	return nil
}

// waitLocked waits for the list's merge under way, if any.
func (li *List) waitLocked(ctx context.Context) error {
	if li.pending == nil {
		return nil
	}
	select {
	case err := <-li.pending:
		li.pending = nil
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Batch collects a fan-out batch's responses (credit histories, details: small, about 20 MB for
// a full batch) in memory so that staging and merging them is one queued write. It holds at most
// FanoutBatchBytes: the Add that reaches it merges what the batch holds before it returns. Add
// may be called from several goroutines.
type Batch struct {
	s     *Sink
	e     entity.Name
	mu    sync.Mutex
	pages []batchPage
	bytes int64
}

type batchPage struct {
	page  int
	items []json.RawMessage
}

// Batch starts a fan-out batch of e.
func (s *Sink) Batch(e entity.Name) *Batch { return &Batch{s: s, e: e} }

// Add keeps a page's records; when the batch holds FanoutBatchBytes it merges them, and waits:
// the caller reads no further until the bytes it held are in DuckDB's hands.
func (b *Batch) Add(ctx context.Context, page int, items []json.RawMessage) error {
	full := b.keep(page, items)
	if full == nil {
		return nil
	}
	return b.s.call(ctx, func(ctx context.Context) error { return b.s.stageMerge(ctx, b.e, full) })
}

// keep adds a page; when the pages held reach the byte bound it hands them all back (and
// holds none).
func (b *Batch) keep(page int, items []json.RawMessage) []batchPage {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.pages = append(b.pages, batchPage{page, items})
	for _, it := range items {
		b.bytes += int64(len(it))
	}
	if b.bytes < b.s.b.fanoutBatchBytes {
		return nil
	}
	full := b.pages
	b.pages, b.bytes = nil, 0
	return full
}

func (b *Batch) take() []batchPage {
	b.mu.Lock()
	defer b.mu.Unlock()
	p := b.pages
	b.pages, b.bytes = nil, 0
	return p
}

// Commit queues, without waiting, one write that stages and merges what the batch holds.
// Failures surface at the sink's next call or Flush.
func (b *Batch) Commit(ctx context.Context) error {
	pages := b.take()
	return b.s.submit(ctx, func(ctx context.Context) error { return b.s.stageMerge(ctx, b.e, pages) })
}

// CommitCredit is Commit for a batch of credit histories: after a successful merge, the same
// write records that the customers' histories were read as of the run's observation time.
func (b *Batch) CommitCredit(ctx context.Context, read []syncdata.CreditTarget) error {
	if b.e != entity.CreditLedger {
		return fmt.Errorf("commit credit: a batch of %s", b.e)
	}
	customers, reasons := make([]string, len(read)), make([]string, len(read))
	for i, t := range read {
		customers[i], reasons[i] = t.CustomerID, t.Reason
	}
	pages := b.take()
	return b.s.submit(ctx, func(ctx context.Context) error {
		if err := b.s.stageMerge(ctx, b.e, pages); err != nil {
			return err
		}
		return b.s.b.markCreditFetched(ctx, b.s.run.Account, customers, reasons, b.s.ObservedAt(), b.s.run.ID)
	})
}

// stageMerge stages pages into a new loader of e and merges them; it runs on the writer.
func (s *Sink) stageMerge(ctx context.Context, e entity.Name, pages []batchPage) error {
	l, err := s.newLoader(ctx, e)
	if err != nil {
		return err
	}
	for _, p := range pages {
		for i, it := range p.items {
			if err := l.Add(p.page, i, it); err != nil {
				l.Discard()
				return err
			}
		}
	}
	return s.merge(ctx, l)
}
