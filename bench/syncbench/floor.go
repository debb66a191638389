package main

import (
	"bufio"
	"bytes"
	"context"
	"database/sql"
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
	"github.com/billsync/billsync/internal/entity"
	"github.com/billsync/billsync/internal/fetch"
	"github.com/billsync/billsync/internal/sqlfile"
	"github.com/billsync/billsync/internal/warehouse"
)

// floor.sql loads one entity's NDJSON file into the warehouse's table of it, written by hand
// for the lists of its day; __FILE__ stands for the file's path (read_json takes no prepared
// parameter). A list declared without a section there is loaded by floorGeneratedSQL.
//
//go:embed floor.sql
var floorFS embed.FS

var floorHandSQL = sqlfile.MustSections(floorFS, "floor.sql")

// floorList is one entity the list phase reads: its table, and the paths of a paged list (none
// for the webhook history, read by its cursor).
type floorList struct {
	entity string
	table  string
	paths  []string
}

// floorLists are the list phase's reads, from the declarations as internal/fetch makes them
// (lists.go: every paged list, webhooks.go: the webhook history): the same paths, one stream
// each, all streams at once under one bound of requests in flight.
var floorLists = func() []floorList {
	var ls []floorList
	for _, d := range entity.All() {
		if d.Paging == entity.Pages || d.Name == entity.WebhookDeliveries {
			ls = append(ls, floorList{entity: string(d.Name), table: d.TableName(), paths: d.Paths})
		}
	}
	return ls
}()

// floorLoadSQL is the load of one entity's file: floor.sql's section, else generated from its
// declaration.
func floorLoadSQL(l floorList) (string, error) {
	if q, ok := floorHandSQL[l.entity]; ok {
		return q, nil
	}
	d, ok := entity.Get(entity.Name(l.entity))
	if !ok {
		return "", fmt.Errorf("floor: %s is not declared", l.entity)
	}
	return floorGeneratedSQL(d), nil
}

// floorGeneratedSQL loads a declared list's records with the warehouse's own casts (the bs_
// macros its projection uses), each typed column from the first of its JSON fields present. A
// column only a hand-written projection computes stays NULL: such a floor is a little low, so
// floor.sql gets a section for a list worth measuring closely.
func floorGeneratedSQL(d *entity.Decl) string {
	cast := map[entity.Type]string{entity.Int: "bs_int(%s)", entity.Number: "bs_num(%s)", entity.Decimal: "bs_dec(%s)", entity.Time: "bs_ts(%s)"}
	var b strings.Builder
	fmt.Fprintf(&b, "-- generated from internal/entity's declaration of %s\n", d.Name)
	fmt.Fprintf(&b, "INSERT INTO %s BY NAME\nSELECT 'floor' AS account, o.json->>'$.id' AS id,\n", d.TableName())
	for _, f := range d.Fields {
		if len(f.JSON) == 0 {
			continue
		}
		var vals []string
		for _, j := range f.JSON {
			v := fmt.Sprintf("o.json->>'$.%s'", j)
			if f.Type == entity.JSON { // a JSON null is no value, as the projection stores it
				v = fmt.Sprintf("nullif(o.json->'$.%s', 'null'::JSON)", j)
			}
			vals = append(vals, v)
		}
		v := vals[0]
		if len(vals) > 1 {
			v = "coalesce(" + strings.Join(vals, ", ") + ")"
		}
		if c, ok := cast[f.Type]; ok {
			v = fmt.Sprintf(c, v)
		}
		fmt.Fprintf(&b, "       %s AS \"%s\",\n", v, f.Col)
	}
	b.WriteString("       o.json AS raw, 1 AS first_seen_run, 1 AS last_seen_run, now() AS first_seen_at, now() AS last_seen_at\n")
	b.WriteString("FROM read_ndjson_objects(__FILE__) o;")
	return b.String()
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
	for _, l := range floorLists {
		f, err := os.Create(filepath.Join(dir, l.entity+".ndjson"))
		if err != nil {
			return r, err
		}
		defer f.Close()
		files[l.entity] = &ndjson{f: f, w: bufio.NewWriterSize(f, 1<<20)}
	}
	start, cpu0 := time.Now(), cpuSeconds(os.Getpid())
	if err := floorRead(ctx, &floorReader{c: c, pageSize: pageSize, conc: conc, sem: make(chan struct{}, conc)}, files); err != nil {
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
	if err := floorLoad(ctx, b.DB(), dir); err != nil {
		return r, err
	}
	r.load, r.loadCPU, r.loadWritten = time.Since(start), cpuSeconds(os.Getpid())-cpu0, writtenMB()-written0
	return r, floorCheck(ctx, b.DB(), files)
}

// floorReader makes the floor's requests: every stream's share one bound of requests in flight
// (sem, conc of them), as the syncer's do.
type floorReader struct {
	c        *api.Client
	pageSize int
	conc     int
	sem      chan struct{}
}

// floorRead is the floor's half (a): every list and the webhook history at once, each
// record written to its entity's file.
func floorRead(ctx context.Context, fr *floorReader, files map[string]*ndjson) error {
	g, gctx := errgroup.WithContext(ctx)
	for _, l := range floorLists {
		out := files[l.entity]
		if l.entity == string(entity.WebhookDeliveries) {
			g.Go(func() error { return fr.webhookHistory(gctx, out) })
			continue
		}
		g.Go(func() error {
			for _, path := range l.paths {
				if err := fr.list(gctx, path, out); err != nil {
					return err
				}
			}
			return nil
		})
	}
	return g.Wait()
}

// page reads one page of a list, holding a place among the requests in flight.
func (fr *floorReader) page(ctx context.Context, path string, page int) (*api.ListPage, error) {
	select {
	case fr.sem <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	defer func() { <-fr.sem }()
	q := url.Values{"page": {strconv.Itoa(page)}, "pageSize": {strconv.Itoa(fr.pageSize)}}
	p, err := fr.c.List(ctx, path, q)
	if err != nil {
		return nil, fmt.Errorf("page %d of %s: %w", page, path, err)
	}
	return p, nil
}

// list pages one path as the syncer does: the first page says how many there are, the rest go
// at once, and pages after the last counted one are followed while the server says more.
func (fr *floorReader) list(ctx context.Context, path string, out *ndjson) error {
	first, err := fr.page(ctx, path, 1)
	if err != nil {
		return err
	}
	if err := out.add(first.Items); err != nil {
		return err
	}
	last, lastNo := first, 1
	if first.HasMore && first.PageCount > 1 {
		pg, pctx := errgroup.WithContext(ctx)
		pg.SetLimit(fr.conc)
		for p := 2; p <= first.PageCount; p++ {
			pg.Go(func() error {
				page, err := fr.page(pctx, path, p)
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
		if last, err = fr.page(ctx, path, lastNo); err != nil {
			return err
		}
		if err := out.add(last.Items); err != nil {
			return err
		}
	}
	return nil
}

// webhookHistory reads the webhook history by its cursor, 50 a page, one request at a time.
func (fr *floorReader) webhookHistory(ctx context.Context, out *ndjson) error {
	start := ""
	for {
		select {
		case fr.sem <- struct{}{}:
		case <-ctx.Done():
			return ctx.Err()
		}
		p, err := fr.c.WebhookHistory(ctx, min(fr.pageSize, 50), start)
		<-fr.sem
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
}

// floorLoad is the floor's half (b): each entity's file into its table, then a checkpoint.
func floorLoad(ctx context.Context, db *sql.DB, dir string) error {
	for _, l := range floorLists {
		q, err := floorLoadSQL(l)
		if err != nil {
			return err
		}
		lit := "'" + filepath.Join(dir, l.entity+".ndjson") + "'" // a temp path: no quote in it
		if _, err := db.ExecContext(ctx, strings.ReplaceAll(q, "__FILE__", lit)); err != nil {
			return fmt.Errorf("load %s: %w", l.entity, err)
		}
	}
	_, err := db.ExecContext(ctx, "CHECKPOINT")
	return err
}

// floorCheck, untimed, proves the load measured the real thing: every record arrived, each
// row's typed id is its own raw record's (the positional join paired them right), and the raw
// column is ZSTD as in the warehouse.
func floorCheck(ctx context.Context, db *sql.DB, files map[string]*ndjson) error {
	for _, l := range floorLists {
		var rows, mismatched int64
		err := db.QueryRowContext(ctx, fmt.Sprintf(`SELECT count(*), count(*) FILTER (WHERE id IS DISTINCT FROM json_extract_string(raw, '$.id')) FROM %s`, l.table)).Scan(&rows, &mismatched)
		if err != nil {
			return fmt.Errorf("check %s: %w", l.entity, err)
		}
		if n := files[l.entity].n; rows != n || mismatched > 0 {
			return fmt.Errorf("floor load of %s: %d rows of %d records, %d with another record's raw", l.entity, rows, n, mismatched)
		}
	}
	var zstd int64
	if err := db.QueryRowContext(ctx, `SELECT count(*) FROM pragma_storage_info('customers')
		WHERE column_name = 'raw' AND compression = 'ZSTD'`).Scan(&zstd); err != nil || zstd == 0 {
		return fmt.Errorf("floor: customers.raw is not stored with ZSTD (%d segments; %v)", zstd, err)
	}
	return nil
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
