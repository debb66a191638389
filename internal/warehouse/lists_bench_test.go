package warehouse

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/billsync/billsync/internal/entity"
	"github.com/billsync/billsync/internal/sandbox"
	"github.com/billsync/billsync/internal/syncdata"
)

// listBatch is the sink's batch size: a stream merges every listBatch records. BENCH_BATCH
// overrides it, to measure other sizes.
var listBatch = DefaultListBatch

func init() {
	if v, err := strconv.Atoi(os.Getenv("BENCH_BATCH")); err == nil {
		listBatch = v
	}
}

// syncLists is the warehouse side of a sync's list phase with the simulator's own records: every
// list entity staged and merged in listBatch batches, then the deletion marking of a list read
// whole, the calls the sink makes, here one stream after another (fetch merges two at a time).
// The lists are the declarations' (internal/entity): every paged list and the webhook history.
var syncLists = func() []syncList {
	var ls []syncList
	for _, d := range entity.All() {
		if d.Paging == entity.Pages || d.Name == entity.WebhookDeliveries {
			ls = append(ls, syncList{d.Name, d.TableName()})
		}
	}
	return ls
}()

// syncList is one list entity and the simulator's collection of it (its table's name).
type syncList struct {
	e          entity.Name
	collection string
}

// BenchmarkSyncLists measures the list phase's DuckDB work for a first sync and for the next,
// unchanged one, at the simulator scale in BENCH_SCALE (default 20, ~190k records; 100 is the
// ~1.16M of `syncbench -scale 100`; 0.2 with -short). BENCH_SQL runs a statement on the build first (a setting to
// try, e.g. "SET memory_limit='1GB'"); BENCH_LOG=1 logs every merge step's time.
//
//	BENCH_SCALE=100 go test -run '^$' -bench SyncLists -benchtime 1x ./internal/warehouse/
func BenchmarkSyncLists(b *testing.B) {
	scale := 20.0
	if testing.Short() {
		scale = 0.2
	}
	if s := os.Getenv("BENCH_SCALE"); s != "" {
		var err error
		if scale, err = strconv.ParseFloat(s, 64); err != nil {
			b.Fatalf("BENCH_SCALE %q: %v", s, err)
		}
	}
	sb, err := sandbox.New(sandbox.Options{Seed: 42, Scale: scale, Now: time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)})
	if err != nil {
		b.Fatal(err)
	}
	dumps := make([][]json.RawMessage, len(syncLists))
	total := 0
	for i, l := range syncLists {
		dumps[i] = sb.Dump(l.collection)
		total += len(dumps[i])
	}
	ctx := context.Background()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	if os.Getenv("BENCH_LOG") != "" {
		log = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	for range b.N {
		b.StopTimer()
		build, err := StartBuild(ctx, fmt.Sprintf("%s/bench.duckdb", b.TempDir()), BuildOptions{Log: log})
		if err != nil {
			b.Fatal(err)
		}
		if q := os.Getenv("BENCH_SQL"); q != "" {
			if _, err := build.DB().ExecContext(ctx, q); err != nil {
				b.Fatal(err)
			}
		}
		b.StartTimer()
		cpu0 := cpuTime()
		first := syncOnce(b, build, dumps, time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC))
		cpu1 := cpuTime()
		again := syncOnce(b, build, dumps, time.Date(2026, 11, 2, 0, 0, 0, 0, time.UTC))
		b.ReportMetric(float64(total)/first.Seconds(), "first_rec/s")
		b.ReportMetric(float64(total)/again.Seconds(), "again_rec/s")
		// CPU seconds tell changes apart on a shared machine where wall time swings
		b.ReportMetric((cpu1 - cpu0).Seconds(), "first_cpu_s")
		b.ReportMetric((cpuTime() - cpu1).Seconds(), "again_cpu_s")
		b.StopTimer()
		if err := build.Discard(); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
}

// syncOnce runs one account's list phase and checks every record was seen.
func syncOnce(b *testing.B, build *Build, dumps [][]json.RawMessage, at time.Time) time.Duration {
	ctx := context.Background()
	start := time.Now()
	run, err := build.startRun(ctx, "bench", at)
	if err != nil {
		b.Fatal(err)
	}
	for i, l := range syncLists {
		for from := 0; from < len(dumps[i]); from += listBatch {
			ld, err := build.newLoader(ctx, l.e, run.ID, run.Account, at)
			if err != nil {
				b.Fatal(err)
			}
			for j, rec := range dumps[i][from:min(from+listBatch, len(dumps[i]))] {
				n := from + j
				if err := ld.Add(1+n/100, n%100, rec); err != nil {
					b.Fatal(err)
				}
			}
			if _, err := ld.Merge(ctx); err != nil {
				b.Fatal(err)
			}
		}
		if !entityDefs[l.e].deletes {
			continue
		}
		seen, err := build.seenInRun(ctx, l.e, run.Account, run.ID)
		if err != nil {
			b.Fatal(err)
		}
		if seen != int64(len(dumps[i])) {
			b.Fatalf("%s: seen %d of %d", l.e, seen, len(dumps[i]))
		}
		if entityDefs[l.e].deletes {
			if _, err := build.markDeleted(ctx, l.e, run.Account, run.ID, at); err != nil {
				b.Fatal(err)
			}
		}
	}
	if err := build.finishRun(ctx, run.ID, syncdata.RunStats{Status: "succeeded", Finished: at}); err != nil {
		b.Fatal(err)
	}
	// Publish checkpoints: work deferred by the checkpoint policy is paid here
	if _, err := build.DB().ExecContext(ctx, "CHECKPOINT"); err != nil {
		b.Fatal(err)
	}
	return time.Since(start)
}

// cpuTime is the CPU time the process has used, user and system.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
