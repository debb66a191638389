// Package syncrun owns a sync run: the accounts, the private build of the warehouse it writes
// (started, or resumed after an interrupted run), its DuckDB settings and Go's GC goal while it
// runs, and its end: published when every account succeeded, kept for the next run to resume
// otherwise, discarded when it failed the same way twice. Reading the billing service is
// internal/fetch's, which writes to the build through the sink adapted here.
package syncrun

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/billsync/billsync/internal/api"
	"github.com/billsync/billsync/internal/config"
	"github.com/billsync/billsync/internal/fetch"
	"github.com/billsync/billsync/internal/gcgoal"
	"github.com/billsync/billsync/internal/lake"
	"github.com/billsync/billsync/internal/warehouse"
	"github.com/billsync/billsync/queries"
)

// Account is one billing-service account to sync; its name tags every row it contributes.
type Account struct {
	Name   string
	Client *api.Client
}

// Options tune a run: how each account is read (fetch.Options, the settings of config.Fetch
// among them) and how the build is written (config.Build, and knobs for benchmarks).
type Options struct {
	fetch.Options
	config.Build // "" memory limit = the configuration's default

	KeepMemory string // buffer memory DuckDB keeps for reuse while building; "" = none. For benchmarks
	// RowGroupSize is the rows per row group the build writes, and a list batch's records
	// (0 = warehouse.DefaultRowGroupSize). For benchmarks.
	RowGroupSize int

	MemoryTrace func(warehouse.MemorySample) // optional diagnostic: DuckDB's memory every 250 ms

	// Lake, when set, receives each published run's accounts (internal/lake). Its commit
	// follows the publish and never fails the run: a failure is logged and handed to
	// LakeDone, and the next run commits what is missing.
	Lake     *lake.Lake
	LakeDone func(lake.Result, error) // optional: the commit's outcome, for the syncer's status
}

// Run syncs every account into a private build of the warehouse at path and publishes it only
// when all of them succeeded. On failure or cancellation the build is kept, not published: the
// published warehouse stays exactly the previous run's, and the next Run resumes the build.
func Run(ctx context.Context, path string, accounts []Account, opts Options) ([]fetch.Summary, error) {
	if len(accounts) == 0 {
		return nil, errors.New("no account to sync")
	}
	log := opts.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	sums, err := buildAndPublish(ctx, path, accounts, opts, log)
	if err == nil && opts.Lake != nil {
		// after the sync's lowered GC goal is restored: the commit's Arrow batches are
		// short-lived garbage too, and under the sync's goal the collector ran for most of it
		commitLake(ctx, path, accounts, opts, log)
	}
	return sums, err
}

// buildAndPublish syncs every account into the build and publishes it.
func buildAndPublish(ctx context.Context, path string, accounts []Account, opts Options, log *slog.Logger) ([]fetch.Summary, error) {
	bo := warehouse.BuildOptions{Build: opts.Build, Log: log, KeepMemory: opts.KeepMemory, RowGroupSize: opts.RowGroupSize,
		MemoryTrace: opts.MemoryTrace}
	if testBuildOptions != nil {
		testBuildOptions(&bo)
	}
	// The sync's Go heap is mostly short-lived pages: a heap goal of half the live heap above it
	// instead of all of it lowers the peak at no measurable CPU cost (docs/performance.md).
	defer gcgoal.Lower(syncGCPercent)()
	b, err := warehouse.StartBuild(ctx, path, bo)
	if err != nil {
		return nil, err
	}
	var sums []fetch.Summary
	for _, a := range accounts {
		o := opts.Options
		o.Account = a.Name
		sum, err := fetch.Account(ctx, a.Client, openSink(b), o)
		sums = append(sums, sum)
		if err != nil {
			var auth *api.AuthError
			if errors.As(err, &auth) {
				// about the key, not the stream or endpoint that happened to ask first
				err = auth
			}
			closeFailed(ctx, b, a.Name, err, log)
			return sums, fmt.Errorf("account %s: %w", a.Name, err)
		}
	}
	// The published file carries the report macros of this billsync, for the report queries and
	// analysts' clients.
	if err := installReportSQL(ctx, b.DB()); err != nil {
		// Its runs are finished, so no later run could resume it: the next starts afresh from
		// the published warehouse.
		if derr := b.Discard(); derr != nil {
			log.Error("discarding the unpublished build", "err", derr)
		}
		return sums, fmt.Errorf("publish %s: %w", path, err)
	}
	if err := b.Publish(ctx); err != nil {
		return sums, fmt.Errorf("publish %s: %w", path, err)
	}
	return sums, nil
}

// commitLake commits the published file's accounts to the lake. The sync has succeeded
// whatever happens here: the lake is a copy the next run completes.
func commitLake(ctx context.Context, path string, accounts []Account, opts Options, log *slog.Logger) {
	var names []string
	for _, a := range accounts {
		names = append(names, a.Name)
	}
	res, err := opts.Lake.Commit(ctx, path, names)
	snaps, retries := res.Snapshots()
	if err != nil {
		log.Error("lake commit failed: the published warehouse is unaffected; the next run commits what is missing",
			"err", err, "snapshots", snaps, "retries", retries, "took", res.Took)
	} else {
		log.Info("lake committed", "snapshots", snaps, "retries", retries, "took", res.Took)
	}
	if opts.LakeDone != nil {
		opts.LakeDone(res, err)
	}
}

// openSink starts the build's sink for one account's run, when fetch asks for it.
func openSink(b *warehouse.Build) fetch.Open {
	return func(ctx context.Context, account string, started time.Time, now func() time.Time) (fetch.Sink, error) {
		s, err := b.StartSink(ctx, account, started, now)
		if err != nil {
			return nil, err
		}
		return sink{s}, nil
	}
}

// closeFailed keeps the unpublished build of a failed run for the next attempt to resume, unless
// the run failed the same way before: then it is discarded, and the next attempt starts afresh
// from the published warehouse, so no state kept in a build can fail every later run. A stop,
// or a service that cannot be used for the moment, says nothing about the build and is not
// counted.
func closeFailed(ctx context.Context, b *warehouse.Build, account string, err error, log *slog.Logger) {
	again := false
	if ctx.Err() == nil && !errors.Is(err, context.Canceled) && !api.IsUnavailable(err) && !api.IsAuthFailure(err) {
		var rerr error
		if again, rerr = b.RecordFailure(context.WithoutCancel(ctx), account, warehouse.FailureSignature(err)); rerr != nil {
			log.Error("recording the failure in the unpublished build", "err", rerr)
		}
	}
	if again {
		log.Warn("discarding the unpublished build: its run failed the same way twice; the next run starts afresh from the published warehouse",
			"account", account, "err", err)
		if derr := b.Discard(); derr != nil {
			log.Error("discarding the unpublished build", "err", derr)
		}
		return
	}
	if cerr := b.Close(); cerr != nil {
		log.Error("closing the unpublished build", "err", cerr)
	}
}

// syncGCPercent is Go's GC target during a sync (gcgoal.Lower).
const syncGCPercent = 50

// installReportSQL puts the report macros in the build before it is published; a variable so a
// test can make it fail.
var installReportSQL = queries.Install

// testBuildOptions lets tests change the warehouse's write-path knobs (batch sizes) of a Run.
var testBuildOptions func(*warehouse.BuildOptions)
