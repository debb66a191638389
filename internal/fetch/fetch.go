// Package fetch pages every read endpoint of the billing service into a Sink: HTTP paging,
// request budgets and paging guards, nothing of DuckDB.
//
// Each endpoint is a stream. Streams do HTTP, in goroutines bounded by Options.Concurrency, and
// hand what they read to the run's Sink (the warehouse build's, in a real run: internal/syncrun),
// which decides how and when anything is stored (batches, merges, deletion marks). Lists are
// always paged to the end and ended with what the server announced; the per-customer credit-history fan-out and the
// per-record detail fan-out are budgeted (Options.MaxRequests, Options.MaxDuration) and carried
// over to the next run in priority order.
package fetch

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/billsync/billsync/internal/api"
	"github.com/billsync/billsync/internal/config"
	"github.com/billsync/billsync/internal/entity"
	"github.com/billsync/billsync/internal/syncdata"
	"golang.org/x/sync/errgroup"
)

// Options tune one sync of one account: the settings of config.Fetch as the configuration
// holds them, and what a run adds to them.
type Options struct {
	// Fetch are the settings (BILLSYNC_PAGE_SIZE, ...). A zero page size, concurrency, credit
	// refresh or clock skew is the setting's declared default.
	config.Fetch

	Account string // tag on every row; several accounts can share one warehouse

	// CreditOverlap re-reads this much credit history before the last fetch, so entries that
	// arrive late or were written near the previous run's observation time are not missed.
	// 0 = 48h.
	CreditOverlap time.Duration
	// CreditHints are customers billsync itself sent credit to (the job journal's add-credit
	// sends, any account): one sent since the customer's last read is read first after the
	// never-read, so the reports can confirm the top-up in the ledger.
	CreditHints []syncdata.CreditHint
	// WebhookReread re-reads this much webhook history before the cursor, because delivery
	// records change status after they are first listed. 0 = 72h.
	WebhookReread time.Duration

	// MaxPages bounds the pages of one list per run (0 = DefaultMaxPages), whatever the server
	// announces; the ceiling derived from its announcements is usually far lower. MaxCreditPages
	// does the same for one customer's credit history (0 = DefaultMaxCreditPages).
	MaxPages, MaxCreditPages int

	Progress func(Progress) // optional; called from several goroutines
	Log      *slog.Logger
}

// Progress reports a stream's headway.
type Progress struct {
	Stream  string
	Pages   int64
	Records int64
	Done    bool
	Skipped bool // completed by an earlier, interrupted attempt of the same run
}

// StreamResult is what one stream did.
type StreamResult struct {
	Stream   string
	Pages    int64
	Records  int64
	Complete bool
	Skipped  bool
	Merge    syncdata.MergeResult
	// Conflicts counts ids read with two different contents even when the list was paged again;
	// the last version read was kept and both are in data_quality_conflicts.
	Conflicts int
	// Doubt says why a list was not read whole ("" when it was, or for other streams): nothing
	// was marked deleted from it.
	Doubt string
}

// Summary is what a whole run did.
type Summary struct {
	RunID    int64
	Resumed  bool
	Requests int64
	Retries  int64
	Records  int64
	Streams  []StreamResult
	// CreditPending counts customers whose credit history is due but left to the next run by the budget.
	CreditPending int
	// CreditReads counts the customers due and read, by the reason they were due for, most
	// important reason first: the budget reads in this order.
	CreditReads   []ReasonReads
	DetailPending int
	Conflicts     int // conflicting duplicates recorded (the run is partial)
	// Incomplete names the lists not read whole (an envelope that contradicted itself or what
	// arrived, a list that kept changing): nothing was marked deleted from them, and the run is
	// partial.
	Incomplete []string
	// Redacted counts records whose text held the API key: stored redacted, flagged in
	// data_quality_flags.
	Redacted int

	// ClockSource is the clock the run stored its times by (syncdata.ClockService or
	// ClockMachine; "" when it stored none); ClockSetAside says the service's clock disagreed
	// with this machine's beyond Options.MaxClockSkew, by ClockOffset (the service ahead).
	ClockSource   string
	ClockSetAside bool
	ClockOffset   time.Duration
	// ClockMachine and ClockService are the two clocks when the run decided (ClockService zero
	// when no Date had arrived); ClockFlagged counts the records dated after this machine's
	// clock by a service clock ahead, flagged in data_quality_flags.
	ClockMachine, ClockService time.Time
	ClockFlagged               int64

	// Phase wall times: lists (every list and webhook history, read concurrently) are bound by
	// records, the fan-outs by requests.
	ListsTook, CreditTook, DetailsTook time.Duration
	ListRecords, ListRequests          int64
}

// defaults fills what o leaves zero. The settings' defaults are the configuration's, declared
// once (config.Fetch); a zero one is read as its default, as an unset variable is.
func (o *Options) defaults() {
	d := config.Defaults[config.Fetch]()
	if o.Account == "" {
		o.Account = config.DefaultAccount
	}
	if o.PageSize <= 0 {
		o.PageSize = d.PageSize
	}
	if o.Concurrency <= 0 {
		o.Concurrency = d.Concurrency
	}
	if o.CreditRefresh == 0 {
		o.CreditRefresh = d.CreditRefresh
	}
	if o.MaxClockSkew <= 0 {
		o.MaxClockSkew = d.MaxClockSkew
	}
	if o.CreditOverlap == 0 {
		o.CreditOverlap = 48 * time.Hour
	}
	if o.WebhookReread == 0 {
		o.WebhookReread = 72 * time.Hour
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	if o.MaxPages <= 0 {
		o.MaxPages = DefaultMaxPages
	}
	if o.MaxCreditPages <= 0 {
		o.MaxCreditPages = DefaultMaxCreditPages
	}
}

// Status is the run's outcome as sync_runs, the metrics and the log state it: "partial" when
// the budget left credit histories or details for the next run, conflicting duplicates were
// recorded, a list was not read whole, or the service's clock ran ahead of this machine's beyond
// the bound (its records are dated by a clock that is off, some in this machine's future);
// "succeeded" otherwise. A failed run has no Summary
// status: the error says it.
func (s Summary) Status() string {
	if s.CreditPending > 0 || s.DetailPending > 0 || s.Conflicts > 0 || len(s.Incomplete) > 0 || s.ClockAhead() {
		return "partial"
	}
	return "succeeded"
}

// Account syncs one account, read through c, into the sink open starts. It returns a Summary even
// on error, describing what was done; the caller (internal/syncrun) publishes on success and
// keeps what was stored for the next attempt to resume on error.
func Account(ctx context.Context, c *api.Client, open Open, opts Options) (Summary, error) {
	opts.defaults()
	started := time.Now()
	statsStart := c.Stats()
	c.ResetClockRange() // the Date headers of this run: jumps within it stop it (clock.go)
	// The run's observation time follows the one clock rule (clock.go), decided when the sink
	// first needs it: after a response has arrived.
	clk := &runClock{c: c, bound: opts.MaxClockSkew, log: opts.Log}
	sink, err := open(ctx, opts.Account, started, clk.now)
	if err != nil {
		return Summary{}, fmt.Errorf("start run: %w", err)
	}
	clk.sink = sink
	defer sink.Close()
	if err := repairFutureTimes(ctx, sink, opts); err != nil {
		return Summary{}, err
	}
	if clk.earlier, err = sink.AheadClockSeen(ctx); err != nil {
		return Summary{}, err
	}
	s := &syncer{
		c: c, sink: sink, opts: opts, clock: clk,
		sem:        make(chan struct{}, opts.Concurrency),
		statsStart: statsStart,
		started:    started,
	}
	s.batchRequests, s.batchAge = sink.FanoutBatch()
	sum, err := s.sync(ctx)
	run := sink.Run()
	sum.RunID, sum.Resumed = run.ID, run.Resumed
	sum.Redacted = s.redacted
	sum.ClockSource, sum.ClockSetAside, sum.ClockMachine, sum.ClockService = clk.report()
	sum.ClockOffset, _ = c.ClockOffset()
	if !sum.ClockService.IsZero() {
		sum.ClockOffset = sum.ClockService.Sub(sum.ClockMachine)
	}
	if err == nil {
		err = clk.consistent()
	}
	if err == nil && sum.ClockAhead() {
		// records dated after this machine's clock (and the bound) were dated by the service's
		// clock ahead: stored as they are, flagged
		sum.ClockFlagged, err = sink.FlagServiceClock(ctx, time.Now().Add(opts.MaxClockSkew), clockFlagNote(sum.ClockOffset))
		sum.ClockFlagged += s.flaggedEarly
	}
	c.FlushWaits(ctx)
	st := c.Stats()
	sum.Requests = st.Requests - s.statsStart.Requests
	sum.Retries = st.Retries - s.statsStart.Retries

	if err != nil {
		// The run stays "running" in the unpublished build, so the next attempt resumes it and
		// skips the streams this one completed; the failure itself goes to logs and metrics.
		return sum, err
	}
	err = sink.FinishRun(ctx, syncdata.RunStats{
		Status: sum.Status(), Requests: sum.Requests, Retries: sum.Retries, Records: sum.Records, Finished: time.Now(),
	})
	return sum, err
}

// repairFutureTimes forgets read times and cursors an earlier run stored after this machine's
// clock plus the bound: they came from a service clock ahead, and would hold reads back (the
// credit refresh bound broken, webhook deliveries skipped) until the machine's clock caught up.
func repairFutureTimes(ctx context.Context, sink Sink, opts Options) error {
	latest := time.Now().Add(opts.MaxClockSkew)
	credit, cursors, err := sink.RepairFutureTimes(ctx, latest)
	if err != nil {
		return err
	}
	if credit > 0 || cursors > 0 {
		opts.Log.Warn("stored read times were after this machine's clock (an earlier run took a service clock ahead of it): "+
			"those customers' credit histories are read again in full, and the webhook history from its start",
			"account", opts.Account, "credit_reads_forgotten", credit, "webhook_cursors_forgotten", cursors, "latest_allowed", latest)
	}
	return nil
}

type syncer struct {
	clock      *runClock
	c          *api.Client
	sink       Sink
	opts       Options
	sem        chan struct{}
	statsStart api.Stats
	started    time.Time
	// A fan-out batch closes at batchRequests requests or after batchAge (the sink's sizes).
	batchRequests int
	batchAge      time.Duration

	mu       sync.Mutex // guards StreamResult tallies shared by a stream's page goroutines, and redacted
	redacted int        // records stored with the API key redacted
	// flaggedEarly counts the records flagged for the service's clock before the credit fan-out
	// (the lists'), the evidence that the service dates its records by the clock its Date shows.
	flaggedEarly int64
}

func (s *syncer) sync(ctx context.Context) (Summary, error) {
	var sum Summary

	listStart := time.Now()
	results := make(chan StreamResult, 32)
	// One failing stream does not cancel the others: whatever completes is skipped when the
	// next attempt resumes this run. A stop (ctx) still cancels them all.
	var g errgroup.Group
	for _, l := range lists {
		g.Go(func() error { return s.runStream(ctx, l.stream, l.entity(), results, s.listStream(l)) })
	}
	g.Go(func() error {
		return s.runStream(ctx, webhookStream, entity.WebhookDeliveries, results, s.webhookStream)
	})
	err := g.Wait()
	close(results)
	for r := range results {
		if r.Doubt != "" {
			sum.Incomplete = append(sum.Incomplete, r.Stream)
		}
		sum.Streams = append(sum.Streams, r)
		sum.Conflicts += r.Conflicts
		sum.Records += r.Records
		sum.ListRecords += r.Records
	}
	sum.ListsTook = time.Since(listStart)
	sum.ListRequests = s.c.Stats().Requests - s.statsStart.Requests
	if err != nil {
		return sum, err
	}

	creditStart := time.Now()
	credit, err := s.creditFanout(ctx)
	sum.CreditTook = time.Since(creditStart)
	sum.Streams = append(sum.Streams, credit.StreamResult)
	sum.Records += credit.Records
	sum.CreditPending = credit.pending
	sum.CreditReads = credit.reasons
	if err != nil {
		return sum, err
	}
	if s.opts.Details {
		detailStart := time.Now()
		defer func() { sum.DetailsTook = time.Since(detailStart) }()
		for _, d := range details {
			res, err := s.detailFanout(ctx, d)
			sum.Streams = append(sum.Streams, res.StreamResult)
			sum.Records += res.Records
			sum.DetailPending += res.pending
			if err != nil {
				return sum, err
			}
		}
	}
	return sum, s.sink.Flush(ctx)
}

// runStream skips a stream that an interrupted attempt of this run already completed, and
// records the stream's outcome either way.
func (s *syncer) runStream(ctx context.Context, stream string, e entity.Name, out chan<- StreamResult,
	fn func(context.Context) (StreamResult, error)) error {
	done, err := s.sink.StreamDone(ctx, stream)
	if err != nil {
		return err
	}
	if done {
		s.progress(Progress{Stream: stream, Done: true, Skipped: true})
		out <- StreamResult{Stream: stream, Complete: true, Skipped: true}
		return nil
	}
	started := time.Now()
	res, err := fn(ctx)
	res.Stream = stream
	stats := syncdata.StreamStats{
		Stream: stream, Entity: string(e), Started: started, Finished: time.Now(),
		Pages: res.Pages, Records: res.Records, Requests: res.Pages, Complete: res.Complete && err == nil,
	}
	if err != nil {
		stats.Error = err.Error()
	} else if res.Doubt != "" {
		stats.Error = res.Doubt
	} else if res.Conflicts > 0 {
		stats.Error = fmt.Sprintf("%d conflicting duplicates, the last version read kept; see data_quality_conflicts", res.Conflicts)
	}
	if rerr := s.sink.RecordStream(context.WithoutCancel(ctx), stats); rerr != nil && err == nil {
		err = rerr
	}
	s.progress(Progress{Stream: stream, Pages: res.Pages, Records: res.Records, Done: err == nil})
	out <- res
	var werr *syncdata.WriteError
	if errors.As(err, &werr) {
		return werr // it names its own write, which may be another stream's
	}
	if err != nil {
		return fmt.Errorf("%s: %w", stream, err)
	}
	return nil
}

func (s *syncer) progress(p Progress) {
	if s.opts.Progress != nil {
		s.opts.Progress(p)
	}
}

// acquire bounds the requests in flight; the client's own limiter bounds their rate.
func (s *syncer) acquire(ctx context.Context) error {
	select {
	case s.sem <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (s *syncer) release() { <-s.sem }

// budgetLeft says whether the fan-outs may start another unit of work.
func (s *syncer) budgetLeft() bool {
	if s.opts.MaxDuration > 0 && time.Since(s.started) >= s.opts.MaxDuration {
		return false
	}
	if s.opts.MaxRequests > 0 && s.c.Stats().Requests-s.statsStart.Requests >= s.opts.MaxRequests {
		return false
	}
	return true
}

// count adds records to a stream's tally (streams page concurrently) and reports progress.
// flagRedactions records the records of page p whose text held the API key (stored redacted: the
// client replaced the runs) in data quality, and warns.
func (s *syncer) flagRedactions(ctx context.Context, stream, path string, page int, p *api.ListPage) error {
	if len(p.Redactions) == 0 {
		return nil
	}
	flags := make([]syncdata.Flag, 0, len(p.Redactions))
	for _, r := range p.Redactions {
		for _, f := range r.Fields {
			flags = append(flags, syncdata.Flag{Entity: stream, ID: r.ID, Kind: syncdata.FlagKeyRedacted, Field: f,
				Detail: fmt.Sprintf("%s held the API key (or %d or more of its characters in a row): stored as %s, in the column and the raw JSON",
					f, 8, api.Redacted),
				Path: path, Page: page, Item: r.Item})
		}
	}
	s.mu.Lock()
	s.redacted += len(p.Redactions)
	s.mu.Unlock()
	s.opts.Log.Warn("records held the API key: stored redacted and flagged in data quality (data_quality_flags)",
		"stream", stream, "path", path, "page", page, "records", len(p.Redactions))
	return s.sink.Flag(ctx, flags)
}

func (s *syncer) count(stream string, res *StreamResult, records int64) {
	s.mu.Lock()
	res.Pages++
	res.Records += records
	p := Progress{Stream: stream, Pages: res.Pages, Records: res.Records}
	s.mu.Unlock()
	s.progress(p)
}

// ClockAhead says whether the service's clock ran ahead of this machine's beyond the bound: its
// records are stored as it dates them, those in this machine's future flagged. A service clock
// behind is set aside too (one warning), but dates nothing in this machine's future.
func (s Summary) ClockAhead() bool { return s.ClockSetAside && s.ClockOffset > 0 }

// ClockNote says, for operators, how the service's clock ran ahead of this machine's in the run
// and what the run did about it; "" when it did not.
func (s Summary) ClockNote() string {
	if !s.ClockAhead() {
		return ""
	}
	way := "ahead of"
	if s.ClockOffset < 0 {
		way = "behind"
	}
	note := fmt.Sprintf("the service's clock (its Date header) read %s when this machine's clock read %s: %s %s it. "+
		"Its records are stored as it dates them; billsync's own times (observation, credit reads, cursors) are this machine's",
		clockText(s.ClockService), clockText(s.ClockMachine), roundOffset(s.ClockOffset.Abs()), way)
	if s.ClockFlagged > 0 {
		note += fmt.Sprintf("; %d records dated after this machine's clock are flagged in data quality (data_quality_flags)", s.ClockFlagged)
	}
	return note + ". Set the service's or this machine's clock right (NTP)."
}

// clockFlagNote ends the detail of each record flagged for the service's clock, ahead by offset.
func clockFlagNote(offset time.Duration) string {
	return fmt.Sprintf("the service's clock (its Date header) ran %s ahead of this machine's; stored as the service dates it",
		roundOffset(offset))
}
