// Package metrics exposes the syncer's run metrics to Prometheus through the official client,
// with the Go runtime and process collectors operators' dashboards expect.
package metrics

import (
	"net/http"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Sync holds the syncer's metrics on a registry of its own (tests and several syncers in one
// process never collide on the global one). The zero value is ready to use.
type Sync struct {
	once        sync.Once
	reg         *prometheus.Registry
	handler     http.Handler
	runs        *prometheus.CounterVec
	records     prometheus.Counter
	requests    prometheus.Counter
	retries     prometheus.Counter
	lastSeconds prometheus.Gauge
	lastSuccess prometheus.Gauge
	clockOffset prometheus.Gauge
	clockAside  prometheus.Counter
}

func (m *Sync) init() {
	m.once.Do(func() {
		m.reg = prometheus.NewRegistry()
		m.runs = prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "billsync_sync_runs_total", Help: "Sync runs by outcome."}, []string{"status"})
		m.records = prometheus.NewCounter(prometheus.CounterOpts{
			Name: "billsync_records_total", Help: "Records fetched and merged."})
		m.requests = prometheus.NewCounter(prometheus.CounterOpts{
			Name: "billsync_requests_total", Help: "HTTP requests sent to the billing service."})
		m.retries = prometheus.NewCounter(prometheus.CounterOpts{
			Name: "billsync_retries_total", Help: "Requests retried after 429, 5xx or network errors."})
		m.lastSeconds = prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "billsync_last_run_duration_seconds", Help: "Duration of the last run."})
		m.lastSuccess = prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "billsync_last_success_timestamp_seconds", Help: "Unix time of the last successful run (0: none yet)."})
		m.clockOffset = prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "billsync_service_clock_offset_seconds", Help: "How far the billing service's clock (its Date header) was ahead of this machine's at the last run (negative: behind)."})
		m.clockAside = prometheus.NewCounter(prometheus.CounterOpts{
			Name: "billsync_service_clock_set_aside_total", Help: "Account runs that stored this machine's times because the service's clock disagreed beyond BILLSYNC_MAX_CLOCK_SKEW."})
		m.reg.MustRegister(m.runs, m.records, m.requests, m.retries, m.lastSeconds, m.lastSuccess, m.clockOffset, m.clockAside,
			collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
		m.handler = promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Registry: m.reg})
	})
}

// RunFinished records one finished run.
func (m *Sync) RunFinished(status string, records, requests, retries int64, took time.Duration, at time.Time) {
	m.init()
	m.runs.WithLabelValues(status).Inc()
	m.records.Add(float64(records))
	m.requests.Add(float64(requests))
	m.retries.Add(float64(retries))
	m.lastSeconds.Set(took.Seconds())
	if status == "succeeded" || status == "partial" {
		m.lastSuccess.Set(float64(at.UnixMilli()) / 1000)
	}
}

// Clock records the service's clock offset an account's run measured, and whether the run set
// the service's clock aside for disagreeing beyond the bound.
func (m *Sync) Clock(offset time.Duration, setAside bool) {
	m.init()
	m.clockOffset.Set(offset.Seconds())
	if setAside {
		m.clockAside.Inc()
	}
}

// ServeHTTP serves the exposition (text format, or what the scraper negotiates).
func (m *Sync) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	m.init()
	m.handler.ServeHTTP(w, r)
}
