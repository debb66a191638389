package metrics

import (
	"io"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func TestExposition(t *testing.T) {
	var m Sync
	at := time.Date(2026, 11, 21, 2, 0, 0, 0, time.UTC)
	m.RunFinished("succeeded", 120, 14, 2, 3*time.Second, at)
	m.RunFinished("failed", 5, 3, 3, time.Second, at.Add(time.Hour))
	m.Clock(5*365*24*time.Hour, true)
	m.Clock(-90*time.Second, false)

	srv := httptest.NewServer(&m)
	defer srv.Close()
	resp, err := srv.Client().Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain; version=0.0.4") {
		t.Errorf("Content-Type = %q", ct)
	}
	for _, want := range []string{
		"# TYPE billsync_sync_runs_total counter",
		`billsync_sync_runs_total{status="failed"} 1`,
		`billsync_sync_runs_total{status="succeeded"} 1`,
		"billsync_records_total 125",
		"billsync_requests_total 17",
		"billsync_retries_total 5",
		"billsync_last_run_duration_seconds 1\n",
		"billsync_last_success_timestamp_seconds 1.7952264e+09",
		"billsync_service_clock_offset_seconds -90\n",
		"billsync_service_clock_set_aside_total 1\n",
		"go_goroutines ",
		"process_resident_memory_bytes ",
	} {
		if !strings.Contains(string(body), want) {
			t.Errorf("exposition lacks %q:\n%s", want, body)
		}
	}
}

func TestNoRunYet(t *testing.T) {
	var m Sync
	rec := httptest.NewRecorder()
	m.ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	if body := rec.Body.String(); !strings.Contains(body, "billsync_last_success_timestamp_seconds 0\n") {
		t.Errorf("before any run, last success should be 0:\n%s", body)
	}
}
