package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/billsync/billsync/internal/api"
	"github.com/billsync/billsync/internal/fetch"
	"github.com/billsync/billsync/internal/warehouse"
)

// progress keeps one status line on a terminal: the streams still running with their counts,
// and a finished line per stream as it completes.
type progress struct {
	w      io.Writer
	mu     sync.Mutex
	active map[string]fetch.Progress
	last   time.Time
	width  int

	wait      api.Wait  // the latest wait the client announced
	waitUntil time.Time // shown until then
}

func newProgress(w io.Writer) *progress {
	return &progress{w: w, active: map[string]fetch.Progress{}}
}

func (p *progress) update(ev fetch.Progress) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if ev.Done {
		delete(p.active, ev.Stream)
		p.clear()
		note := fmt.Sprintf("%d records, %d pages", ev.Records, ev.Pages)
		if ev.Skipped {
			note = "done in the interrupted run; skipped"
		}
		fmt.Fprintf(p.w, "  ✓ %-26s %s\n", ev.Stream, note)
		p.draw()
		return
	}
	p.active[ev.Stream] = ev
	if time.Since(p.last) > 200*time.Millisecond {
		p.clear()
		p.draw()
	}
}

// waiting shows a wait of the client (a retry, a 429 pause, a long rate-limit wait) on the status
// line while it lasts: `waiting 12 s (429 Retry-After)`.
func (p *progress) waiting(w api.Wait) {
	p.mu.Lock()
	defer p.mu.Unlock()
	until := time.Now().Add(w.Delay)
	if until.Before(p.waitUntil) {
		return // a longer wait is already shown
	}
	p.wait, p.waitUntil = w, until
	p.clear()
	p.draw()
}

// waitLine is the status line's wait part, "" when nothing waits.
func waitLine(w api.Wait, left time.Duration) string {
	if left <= 0 {
		return ""
	}
	return fmt.Sprintf("waiting %d s (%s)", int(left.Round(time.Second)/time.Second), w.Cause)
}

func (p *progress) draw() {
	wait := waitLine(p.wait, time.Until(p.waitUntil))
	if len(p.active) == 0 && wait == "" {
		return
	}
	names := make([]string, 0, len(p.active))
	for n := range p.active {
		names = append(names, n)
	}
	sort.Strings(names)
	parts := make([]string, len(names))
	for i, n := range names {
		parts[i] = fmt.Sprintf("%s %d", n, p.active[n].Records)
	}
	if wait != "" {
		parts = append(parts, wait)
	}
	line := "  … " + strings.Join(parts, " · ")
	if len(line) > 150 {
		line = line[:150]
	}
	fmt.Fprint(p.w, line)
	p.width = len(line)
	p.last = time.Now()
}

func (p *progress) clear() {
	if p.width > 0 {
		fmt.Fprintf(p.w, "\r%s\r", strings.Repeat(" ", p.width))
		p.width = 0
	}
}

func (p *progress) close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.clear()
}

// waitRelay hands the API clients' waits to the progress display of the run under way, if any;
// the clients are made once, the display per run.
type waitRelay struct {
	mu sync.Mutex
	p  *progress
}

func (r *waitRelay) set(p *progress) {
	r.mu.Lock()
	r.p = p
	r.mu.Unlock()
}

func (r *waitRelay) wait(w api.Wait) {
	r.mu.Lock()
	p := r.p
	r.mu.Unlock()
	if p != nil {
		p.waiting(w)
	}
}

// progressLog is the progress display off a terminal: one "sync progress" record every interval
// while streams run (records and pages so far, the streams still going), nothing in between.
type progressLog struct {
	log    *slog.Logger
	mu     sync.Mutex
	active map[string]fetch.Progress
	done   fetch.Progress // totals of finished streams
	start  time.Time
	stop   chan struct{}
	wg     sync.WaitGroup
}

func newProgressLog(log *slog.Logger, every time.Duration) *progressLog {
	p := &progressLog{log: log, active: map[string]fetch.Progress{}, start: time.Now(), stop: make(chan struct{})}
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-p.stop:
				return
			case <-t.C:
				p.report()
			}
		}
	}()
	return p
}

func (p *progressLog) update(ev fetch.Progress) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if ev.Done {
		delete(p.active, ev.Stream)
		p.done.Records += ev.Records
		p.done.Pages += ev.Pages
		return
	}
	p.active[ev.Stream] = ev
}

func (p *progressLog) report() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.active) == 0 {
		return
	}
	records, pages := p.done.Records, p.done.Pages
	names := make([]string, 0, len(p.active))
	for n, ev := range p.active {
		names = append(names, n)
		records += ev.Records
		pages += ev.Pages
	}
	sort.Strings(names)
	p.log.Info("sync progress", "records", records, "pages", pages, "running", strings.Join(names, ","),
		"elapsed", time.Since(p.start))
}

func (p *progressLog) close() {
	close(p.stop)
	p.wg.Wait()
}

// summaryTables are the analyst-facing tables counted after a run: the warehouse's data tables
// and the change history.
var summaryTables = append(warehouse.DataTables(), "record_changes")

// printSummary reports the run and the published warehouse's row counts, read back from the file.
// hint adds how to read the file (the demo prints its own next steps instead).
func printSummary(w io.Writer, path string, sums []fetch.Summary, took time.Duration, hint bool) {
	for _, s := range sums {
		fmt.Fprintf(w, "run %d: %d records, %d requests (%d retries) in %s", s.RunID, s.Records, s.Requests,
			s.Retries, took.Round(time.Millisecond))
		if s.Conflicts > 0 {
			fmt.Fprintf(w, "; partial: %d conflicting duplicates (see data_quality_conflicts)", s.Conflicts)
		}
		if s.CreditPending > 0 || s.DetailPending > 0 {
			fmt.Fprintf(w, "; left for the next run by the budget: %d credit histories, %d details",
				s.CreditPending, s.DetailPending)
		}
		if s.Redacted > 0 {
			fmt.Fprintf(w, "; %d records held the API key, stored redacted (see data_quality_flags)", s.Redacted)
		}
		fmt.Fprintln(w)
		if note := s.ClockNote(); note != "" {
			fmt.Fprintf(w, "  partial: %s\n", note)
		}
		if len(s.CreditReads) > 0 {
			fmt.Fprintf(w, "  credit histories read, by why they were due:")
			for _, r := range s.CreditReads {
				fmt.Fprintf(w, " %s %d", r.Reason, r.Read)
				if r.Read != r.Due {
					fmt.Fprintf(w, " of %d", r.Due)
				}
			}
			fmt.Fprintln(w)
		}
	}
	db, err := warehouse.OpenReadOnly(context.Background(), path)
	if err != nil {
		fmt.Fprintln(w, "reading the warehouse back:", err)
		return
	}
	defer db.Close()
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "table\trows\t\n")
	for _, t := range summaryTables {
		var n int64
		// Table names come from the fixed list above, never from input.
		if err := db.QueryRow("SELECT count(*) FROM " + t).Scan(&n); err != nil {
			fmt.Fprintf(tw, "%s\t%v\t\n", t, err)
			continue
		}
		fmt.Fprintf(tw, "%s\t%d\t\n", t, n)
	}
	tw.Flush()
	if hint {
		fmt.Fprintf(w, "warehouse: %s (read it: %s -db %s -sql 'SELECT ...', or any DuckDB >= 1.2 client read-only)\n",
			path, reportCommand(), shellQuote(path))
	} else {
		fmt.Fprintf(w, "warehouse: %s\n", path)
	}
}

// demoExample is the query the demo's next steps suggest.
const demoExample = "SELECT status, count(*) AS invoices, sum(amount) AS amount FROM invoices GROUP BY ALL ORDER BY status"

// printNextSteps ends the demo with three things to do that work as printed on a bare machine.
func printNextSteps(w io.Writer, db, workbook string, files int) {
	fmt.Fprintf(w, `
Next steps:
  1. Open the aging workbook (%d report files in %s):
       %s
  2. Ask the warehouse anything with billsync's own binary (no DuckDB install needed):
       %s -db %s -sql "%s"
  3. Open the same file read-only from any DuckDB >= 1.2 client (CLI, Python, DBeaver):
       duckdb -readonly %s "%s"
`, files, filepath.Dir(workbook), workbook, reportCommand(), shellQuote(db), demoExample, shellQuote(db), demoExample)
}

// reportCommand is how to run the report binary from here: the one built beside this syncer
// (make build puts both in bin/), else go run.
func reportCommand() string {
	exe, err := os.Executable()
	if err != nil {
		return "go run ./cmd/report"
	}
	cand := filepath.Join(filepath.Dir(exe), "report")
	if _, err := os.Stat(cand); err != nil {
		return "go run ./cmd/report"
	}
	if wd, err := os.Getwd(); err == nil {
		if rel, err := filepath.Rel(wd, cand); err == nil && !strings.HasPrefix(rel, "..") {
			if !strings.Contains(rel, string(filepath.Separator)) {
				rel = "." + string(filepath.Separator) + rel
			}
			return rel
		}
	}
	return cand
}

// shellQuote quotes a path for a shell only when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r == '/' || r == '.' || r == '_' || r == '-' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9')
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
