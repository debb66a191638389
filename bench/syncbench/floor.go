package main

import (
	"bufio"
	"bytes"
	"context"
	"embed"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/billsync/billsync/internal/api"
	"github.com/billsync/billsync/internal/config"
	"github.com/billsync/billsync/internal/fetch"
	"github.com/billsync/billsync/internal/sqlfile"
	"github.com/billsync/billsync/internal/warehouse"
)

// floor.sql loads one entity's NDJSON file into the warehouse's table of it; __FILE__ stands
// for the file's path (read_json takes no prepared parameter).
//
//go:embed floor.sql
var floorFS embed.FS

var floorEntities = []string{"customers", "products", "payment_requests", "invoices", "unpaid_transactions", "reviews", "webhook_deliveries"}

var floorSQL = sqlfile.MustLoad(floorFS, "floor.sql", floorEntities...)

// floorLists are the list phase's reads, as internal/fetch/lists.go and webhooks.go make them:
// the same paths, one stream each, all streams at once under one bound of requests in flight.
var floorLists = []struct {
	entity string
	paths  []string
}{
	{"customers", []string{"/hl/v1/customer"}},
	{"products", floorProductPaths()},
	{"payment_requests", []string{"/hl/v1/payment"}},
	{"invoices", []string{"/hl/v1/invoice"}},
	{"unpaid_transactions", []string{"/hl/v1/transactions/unpaid"}},
	{"reviews", []string{"/hl/v1/reviews"}},
}

func floorProductPaths() []string {
	var p []string
	for _, t := range []string{"generic_link", "physical_product", "event", "webinar", "digital_product", "coaching",
		"course", "cohort_based", "fundraising", "ebook", "podcast", "audiobook", "membership", "zakat", "invoice",
		"bundling", "saas", "payment_request", "support"} {
		p = append(p, "/hl/v1/product/type/"+t)
	}
	return p
}

// floorResult is the floor's two halves, measured one after the other.
type floorResult struct {
	records          int64
	http, load       time.Duration
	httpCPU, loadCPU float64
	loadWritten      float64 // MB the load wrote: the DuckDB file, its WAL and what DuckDB spilled
}

// ndjson is one entity's raw records, one per line.
type ndjson struct {
	mu sync.Mutex
	f  *os.File
	w  *bufio.Writer
	n  int64
}

func (j *ndjson) add(items []json.RawMessage) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	for _, it := range items {
		if bytes.IndexByte(it, '\n') >= 0 { // one record per line, whatever the server's layout
			var b bytes.Buffer
			if err := json.Compact(&b, it); err != nil {
				return err
			}
			it = b.Bytes()
		}
		j.w.Write(it)
		if err := j.w.WriteByte('\n'); err != nil {
			return err
		}
	}
	j.n += int64(len(items))
	return nil
}

// runFloor measures what the list phase cannot go below on this machine, against the same
// simulator: (a) paging every list it reads, with the same page size and concurrency, doing
// nothing but decoding the envelope and writing each raw record to an NDJSON file per entity;
// then (b) loading those files with DuckDB's read_json into the warehouse's own tables (its
// migrations, so the same typed columns and ZSTD raw column, the build's DuckDB settings) and
// checkpointing.
func runFloor(ctx context.Context, c *api.Client, dir string, pageSize, conc int) (floorResult, error) {
	var r floorResult
	files := map[string]*ndjson{}
	for _, e := range floorEntities {
		f, err := os.Create(filepath.Join(dir, e+".ndjson"))
		if err != nil {
			return r, err
		}
		defer f.Close()
		files[e] = &ndjson{f: f, w: bufio.NewWriterSize(f, 1<<20)}
	}
	sem := make(chan struct{}, conc)
	get := func(ctx context.Context, path string, page int) (*api.ListPage, error) {
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		defer func() { <-sem }()
		q := url.Values{"page": {strconv.Itoa(page)}, "pageSize": {strconv.Itoa(pageSize)}}
		p, err := c.List(ctx, path, q)
		if err != nil {
			return nil, fmt.Errorf("page %d of %s: %w", page, path, err)
		}
		return p, nil
	}
	start, cpu0 := time.Now(), cpuSeconds(os.Getpid())
	g, gctx := errgroup.WithContext(ctx)
	for _, l := range floorLists {
		out := files[l.entity]
		g.Go(func() error {
			for _, path := range l.paths {
				first, err := get(gctx, path, 1)
				if err != nil {
					return err
				}
				if err := out.add(first.Items); err != nil {
					return err
				}
				last, lastNo := first, 1
				if first.HasMore && first.PageCount > 1 {
					pg, pctx := errgroup.WithContext(gctx)
					pg.SetLimit(conc)
					for p := 2; p <= first.PageCount; p++ {
						pg.Go(func() error {
							page, err := get(pctx, path, p)
							if err != nil {
								return err
							}
							if p == first.PageCount {
								last = page
							}
							return out.add(page.Items)
						})
					}
					if err := pg.Wait(); err != nil {
						return err
					}
					lastNo = first.PageCount
				}
				for last.HasMore && len(last.Items) > 0 {
					lastNo++
					if last, err = get(gctx, path, lastNo); err != nil {
						return err
					}
					if err := out.add(last.Items); err != nil {
						return err
					}
				}
			}
			return nil
		})
	}
	g.Go(func() error { // webhook history by its cursor, 50 a page, one request at a time
		out, start := files["webhook_deliveries"], ""
		for {
			select {
			case sem <- struct{}{}:
			case <-gctx.Done():
				return gctx.Err()
			}
			p, err := c.WebhookHistory(gctx, min(pageSize, 50), start)
			<-sem
			if err != nil {
				return fmt.Errorf("webhook history after %q: %w", start, err)
			}
			if err := out.add(p.Items); err != nil {
				return err
			}
			if !p.HasMore || p.NextStartingAfter == "" || len(p.Items) == 0 || p.NextStartingAfter == start {
				return nil
			}
			start = p.NextStartingAfter
		}
	})
	if err := g.Wait(); err != nil {
		return r, err
	}
	for _, f := range files {
		if err := f.w.Flush(); err != nil {
			return r, err
		}
		r.records += f.n
	}
	r.http, r.httpCPU = time.Since(start), cpuSeconds(os.Getpid())-cpu0

	// The schema comes first and untimed, as the sync's list phase starts after its migrations.
	b, err := warehouse.StartBuild(ctx, filepath.Join(dir, "floor.duckdb"),
		warehouse.BuildOptions{Log: slog.New(slog.DiscardHandler), Build: config.Build{MemoryLimit: memoryLimit}, KeepMemory: keepMemory, RowGroupSize: rowGroupSize})
	if err != nil {
		return r, err
	}
	defer b.Discard()
	start, cpu0, written0 := time.Now(), cpuSeconds(os.Getpid()), writtenMB()
	for _, e := range floorEntities {
		lit := "'" + filepath.Join(dir, e+".ndjson") + "'" // a temp path: no quote in it
		if _, err := b.DB().ExecContext(ctx, strings.ReplaceAll(floorSQL.Get(e), "__FILE__", lit)); err != nil {
			return r, fmt.Errorf("load %s: %w", e, err)
		}
	}
	if _, err := b.DB().ExecContext(ctx, "CHECKPOINT"); err != nil {
		return r, err
	}
	r.load, r.loadCPU, r.loadWritten = time.Since(start), cpuSeconds(os.Getpid())-cpu0, writtenMB()-written0
	// Untimed: every record arrived, each row's typed id is its own raw record's (the positional
	// join paired them right), and the raw column is ZSTD as in the warehouse.
	for _, e := range floorEntities {
		var rows, mismatched int64
		err := b.DB().QueryRowContext(ctx, fmt.Sprintf(`SELECT count(*), count(*) FILTER (WHERE id IS DISTINCT FROM json_extract_string(raw, '$.id')) FROM %s`, e)).Scan(&rows, &mismatched)
		if err != nil {
			return r, fmt.Errorf("check %s: %w", e, err)
		}
		if rows != files[e].n || mismatched > 0 {
			return r, fmt.Errorf("floor load of %s: %d rows of %d records, %d with another record's raw", e, rows, files[e].n, mismatched)
		}
	}
	var zstd int64
	if err := b.DB().QueryRowContext(ctx, `SELECT count(*) FROM pragma_storage_info('customers')
		WHERE column_name = 'raw' AND compression = 'ZSTD'`).Scan(&zstd); err != nil || zstd == 0 {
		return r, fmt.Errorf("floor: customers.raw is not stored with ZSTD (%d segments; %v)", zstd, err)
	}
	return r, nil
}

// printFloor compares the first run's list phase with the floor measured before it. Wall times
// move with whatever else shares the cores; CPU time (the syncer's whole run, which with
// -lists-only is the list phase) moves less.
func printFloor(f floorResult, s fetch.Summary, syncCPU float64) {
	seq := f.http + f.load
	pipe := max(f.http, f.load)
	rate := func(n int64, d time.Duration) float64 { return float64(n) / d.Seconds() }
	fmt.Printf("         floor: %d records; (a) HTTP %s (%.1f CPU-s), (b) load %s (%.1f CPU-s)\n",
		f.records, f.http.Round(10*time.Millisecond), f.httpCPU, f.load.Round(10*time.Millisecond), f.loadCPU)
	fmt.Printf("         list phase %.0f records/s against (a)+(b) %.0f and max(a,b) %.0f: list phase / max(a,b) = %.2f, / (a)+(b) = %.2f\n",
		rate(s.ListRecords, s.ListsTook), rate(f.records, seq), rate(f.records, pipe),
		s.ListsTook.Seconds()/pipe.Seconds(), s.ListsTook.Seconds()/seq.Seconds())
	if listsOnly {
		fmt.Printf("         CPU: list phase %.1f s against the floor's %.1f s: %.2fx\n",
			syncCPU, f.httpCPU+f.loadCPU, syncCPU/(f.httpCPU+f.loadCPU))
		// The same data lands in the same tables, so what the list phase writes beyond the file
		// and WAL that hold it is DuckDB spilling past its memory limit: a count that, unlike CPU
		// time, hardly moves with the machine's load.
		fmt.Printf("         writes: list phase %.0f MB (DuckDB file, WAL, temp spill) against the load's %.0f MB\n",
			lastRunWritten, f.loadWritten)
	}
}

// writtenMB is what this process has written through write system calls so far (wchar of
// /proc/self/io), in MB: DuckDB's file, WAL and spilled temp blocks; 0 where unreadable.
func writtenMB() float64 {
	b, err := os.ReadFile("/proc/self/io")
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "wchar:"); ok {
			n, _ := strconv.ParseFloat(strings.TrimSpace(v), 64)
			return n / 1e6
		}
	}
	return 0
}
