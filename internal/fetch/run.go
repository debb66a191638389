package fetch

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/billsync/billsync/internal/api"
	"github.com/billsync/billsync/internal/gcgoal"
	"github.com/billsync/billsync/internal/warehouse"
)

// Account is one billing-service account to sync; its name tags every row it contributes.
type Account struct {
	Name   string
	Client *api.Client
}

// Run syncs every account into a private build of the warehouse at path and publishes it only
// when all of them succeeded. On failure or cancellation the build is kept, not published: the
// published warehouse stays exactly the previous run's, and the next Run resumes the build.
func Run(ctx context.Context, path string, accounts []Account, opts Options) ([]Summary, error) {
	if len(accounts) == 0 {
		return nil, errors.New("no account to sync")
	}
	log := opts.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	bo := warehouse.BuildOptions{Log: log, MemoryLimit: opts.MemoryLimit, KeepMemory: opts.KeepMemory, RowGroupSize: opts.RowGroupSize,
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
	var sums []Summary
	for _, a := range accounts {
		o := opts
		o.Account = a.Name
		sum, err := syncAccount(ctx, a.Client, b, o)
		sums = append(sums, sum)
		if err != nil {
			if cerr := b.Close(); cerr != nil {
				log.Error("closing the unpublished build", "err", cerr)
			}
			return sums, fmt.Errorf("account %s: %w", a.Name, err)
		}
	}
	if err := b.Publish(ctx); err != nil {
		return sums, fmt.Errorf("publish %s: %w", path, err)
	}
	return sums, nil
}

// syncGCPercent is Go's GC target during a sync (gcgoal.Lower).
const syncGCPercent = 50

// testBuildOptions lets tests change the warehouse's write-path knobs (batch sizes) of a Run.
var testBuildOptions func(*warehouse.BuildOptions)
