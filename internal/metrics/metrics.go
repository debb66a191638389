// Package metrics exposes the syncer's counters in the Prometheus text format. Five series do
// not justify a client library; the exposition format is small and stable.
package metrics

import (
	"fmt"
	"io"
	"net/http"
	"sort"
	"sync"
	"time"
)

// Sync holds the syncer's metrics. The zero value is ready to use.
type Sync struct {
	mu          sync.Mutex
	runs        map[string]int64 // by status
	records     int64
	requests    int64
	retries     int64
	lastSuccess time.Time
	lastSeconds float64
}

// RunFinished records one finished run.
func (m *Sync) RunFinished(status string, records, requests, retries int64, took time.Duration, at time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.runs == nil {
		m.runs = map[string]int64{}
	}
	m.runs[status]++
	m.records += records
	m.requests += requests
	m.retries += retries
	m.lastSeconds = took.Seconds()
	if status == "succeeded" || status == "partial" {
		m.lastSuccess = at
	}
}

// WriteTo writes the exposition.
func (m *Sync) WriteTo(w io.Writer) (int64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	cw := &countWriter{w: w}
	p := func(format string, a ...any) { fmt.Fprintf(cw, format, a...) }
	p("# HELP billsync_sync_runs_total Sync runs by outcome.\n# TYPE billsync_sync_runs_total counter\n")
	statuses := make([]string, 0, len(m.runs))
	for s := range m.runs {
		statuses = append(statuses, s)
	}
	sort.Strings(statuses)
	for _, s := range statuses {
		p("billsync_sync_runs_total{status=%q} %d\n", s, m.runs[s])
	}
	p("# HELP billsync_records_total Records fetched and merged.\n# TYPE billsync_records_total counter\nbillsync_records_total %d\n", m.records)
	p("# HELP billsync_requests_total HTTP requests sent to the billing service.\n# TYPE billsync_requests_total counter\nbillsync_requests_total %d\n", m.requests)
	p("# HELP billsync_retries_total Requests retried after 429, 5xx or network errors.\n# TYPE billsync_retries_total counter\nbillsync_retries_total %d\n", m.retries)
	p("# HELP billsync_last_run_duration_seconds Duration of the last run.\n# TYPE billsync_last_run_duration_seconds gauge\nbillsync_last_run_duration_seconds %g\n", m.lastSeconds)
	var last float64
	if !m.lastSuccess.IsZero() {
		last = float64(m.lastSuccess.UnixMilli()) / 1000
	}
	p("# HELP billsync_last_success_timestamp_seconds Unix time of the last successful run (0: none yet).\n# TYPE billsync_last_success_timestamp_seconds gauge\nbillsync_last_success_timestamp_seconds %.3f\n", last)
	return cw.n, cw.err
}

// ServeHTTP serves the exposition on GET.
func (m *Sync) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
	m.WriteTo(w)
}

type countWriter struct {
	w   io.Writer
	n   int64
	err error
}

func (c *countWriter) Write(p []byte) (int, error) {
	if c.err != nil {
		return 0, c.err
	}
	n, err := c.w.Write(p)
	c.n += int64(n)
	c.err = err
	return n, err
}
