package fetch

import (
	"context"
	"encoding/json"
	"time"

	"github.com/billsync/billsync/internal/entity"
	"github.com/billsync/billsync/internal/syncdata"
)

// Sink is where one account's sync writes what it reads, and what it asks of earlier runs: the
// run's state (streams done, cursors, the last complete read of a list, the run's clock), the
// lists, the fan-out batches and their targets. It decides how and when anything is stored; fetch
// only pages. A Sink is used from several goroutines. The warehouse build's sink is the one a
// real run uses (internal/syncrun adapts it); the tests of this package use one in memory.
type Sink interface {
	// Run is the run the sink writes: its id, whether it resumes an interrupted attempt, and the
	// clock an earlier attempt decided on.
	Run() syncdata.Run
	// SetRunClock records the clock rule the run decided on, for a resumed attempt.
	SetRunClock(syncdata.RunClock) error
	// ObservedAt is the run's time, fixed at its first call (from the Open's now).
	ObservedAt() time.Time
	// SetTimeBound sets the latest time a record of the run may carry (the clock rule decides it
	// with the observation time, from within the Open's now).
	SetTimeBound(syncdata.TimeBound)
	// FlagServiceClock flags the records the run stored dated after `after` (this machine's
	// clock plus the bound) by a service whose clock ran ahead; note ends each flag's detail.
	FlagServiceClock(ctx context.Context, after time.Time, note string) (int64, error)
	// RepairFutureTimes forgets credit read times and cursors stored after latest.
	RepairFutureTimes(ctx context.Context, latest time.Time) (credit, cursors int64, err error)
	// AheadClockSeen is the latest the service's clock read in an earlier run that stored records
	// it dated ahead of this machine's clock (flagged), zero when none: the records' times may
	// reach a day past it after the service's clock is set right.
	AheadClockSeen(ctx context.Context) (time.Time, error)
	// FanoutBatch is when a fan-out batch closes: after this many requests or this long.
	FanoutBatch() (requests int, age time.Duration)

	StreamDone(ctx context.Context, stream string) (bool, error)
	RecordStream(ctx context.Context, st syncdata.StreamStats) error
	// LastRead is how many records the last complete read of stream returned, -1 when none.
	LastRead(ctx context.Context, stream string) (int64, error)
	Cursor(ctx context.Context, stream string) (string, error)
	SetCursor(ctx context.Context, stream, v string) error

	// List starts the list of entity e (named like its stream).
	List(e entity.Name) (ListSink, error)
	// Batch starts a fan-out batch of e.
	Batch(e entity.Name) BatchSink
	// Merged is what the run's merges of e did so far (after Flush, all of it).
	Merged(e entity.Name) syncdata.MergeResult
	// CreditTargets are the customers whose credit history is due, most important first.
	CreditTargets(ctx context.Context, p syncdata.CreditPlan) ([]syncdata.CreditTarget, error)
	// DetailTargets are the ids of records of e's list never read through e's detail endpoint.
	DetailTargets(ctx context.Context, e entity.Name) ([]string, error)
	// NewestCreated is the latest creation time of e's records this run read (ok false: none).
	NewestCreated(ctx context.Context, e entity.Name) (t time.Time, ok bool, err error)

	// Flag records records the run stored but flags for data quality.
	Flag(ctx context.Context, flags []syncdata.Flag) error

	// Flush waits for every write queued so far and reports the first failure (a
	// *syncdata.WriteError when the sink's writer failed).
	Flush(ctx context.Context) error
	// FinishRun closes the run with its outcome and totals.
	FinishRun(ctx context.Context, st syncdata.RunStats) error
	// Close ends the sink; the run stays open unless FinishRun closed it.
	Close()
}

// ListSink takes one list stream's pages, from several goroutines, pass by pass.
type ListSink interface {
	Add(ctx context.Context, page int, items []json.RawMessage) error
	// EndPass ends a pass with what the server announced, and says whether the pass read the
	// whole list (only then may the sink mark records gone upstream).
	EndPass(ctx context.Context, end syncdata.ListEnd) (whole bool, err error)
	// Doubt says why the list was not read whole.
	Doubt() string
	Finish(ctx context.Context) error
}

// BatchSink takes a fan-out batch's pages; the Commit queues them for storage, without waiting.
type BatchSink interface {
	Add(ctx context.Context, page int, items []json.RawMessage) error
	Commit(ctx context.Context) error
	// CommitCredit is Commit for credit histories, recording the customers read.
	CommitCredit(ctx context.Context, read []syncdata.CreditTarget) error
}

// Open starts the sink of account's run. now is the sink's source of the run's observation
// time, called at most once, after a response has arrived (the clock rule, clock.go).
type Open func(ctx context.Context, account string, startedAt time.Time, now func() time.Time) (Sink, error)
