package status

import (
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestNeedsAndExitCodes: what needs a person, as data. Each case is a state of the sources and
// the needs (by a telling fragment) and exit status a monitor gets.
func TestNeedsAndExitCodes(t *testing.T) {
	now := time.Date(2026, 11, 28, 6, 0, 0, 0, time.UTC)
	ok := &Run{ID: 7, Status: "succeeded", FinishedAt: now.Add(-time.Hour)}
	fresh := []Table{{Account: "main", Entity: "customers", LastComplete: now.Add(-time.Hour), Age: time.Hour}}
	tests := []struct {
		name   string
		r      Report
		noWH   bool
		want   []string // one fragment per need, in order
		wantRC int
	}{
		{"all well", Report{Accounts: []Account{{Name: "main", Published: ok}}, Tables: fresh}, false, nil, ExitOK},
		{"nothing synced", Report{}, true, []string{"no sync has succeeded yet"}, ExitNoWarehouse},
		{"a first sync under way", Report{Syncer: &Syncer{Running: true, RunningSince: now}}, true, nil, ExitOK},
		{"latest attempt failed", Report{Accounts: []Account{{Name: "main", Published: ok,
			Attempt: &Run{Status: "failed", Problem: "account main: GET /hl/v1/payment page 1: HTTP 500"}}}}, false,
			[]string{"account main: the latest sync failed: GET /hl/v1/payment page 1: HTTP 500"}, ExitNeeds},
		{"lake commit failed", Report{Accounts: []Account{{Name: "main", Published: ok,
			Attempt: &Run{ID: 7, Status: "succeeded", Lake: "failed after 2 snapshots: lake table invoices: commit: disk full",
				LakeBehind: 2, LakeError: "failed after 2 snapshots: lake table invoices: commit: disk full"}}}}, false,
			[]string{"account main: the lake is behind the published warehouse by 2 runs: failed after 2 snapshots: lake table invoices: commit: disk full; the next run commits"}, ExitNeeds},
		{"lake committed", Report{Accounts: []Account{{Name: "main", Published: ok,
			Attempt: &Run{ID: 7, Status: "succeeded", Lake: "committed 3 snapshots (0 retries) in 1.2s"}}}}, false, nil, ExitOK},
		{"partial run published", Report{Accounts: []Account{{Name: "main", Published: &Run{Status: "partial"}}}}, false,
			[]string{"account main: the latest sync was partial"}, ExitNeeds},
		{"a stale table", Report{Tables: []Table{{Stale: true}, {}}}, false, []string{"1 tables not read completely for more than 26h0m0s"}, ExitNeeds},
		{"a failed delivery", Report{Deliveries: []Delivery{{Name: "daily", LastAsOf: "2026-11-27", LastState: "failed"}}}, false,
			[]string{"delivery daily (as of 2026-11-27): failed"}, ExitNeeds},
		{"an unknown delivery", Report{Deliveries: []Delivery{{Name: "monthly", LastAsOf: "2026-10-31", LastState: "unknown"}}}, false,
			[]string{"delivery monthly (as of 2026-10-31): unknown"}, ExitNeeds},
		{"a sent delivery", Report{Deliveries: []Delivery{{Name: "daily", LastState: "sent"}}}, false, nil, ExitOK},
		{"unresolved rows", Report{Jobs: []JobWaiting{{Plan: "abc", Unresolved: 2}}}, false, []string{"plan abc: 2 rows unresolved"}, ExitNeeds},
		{"rows sent, outcome unknown", Report{Jobs: []JobWaiting{{Plan: "abc", Unsettled: 1}}}, false,
			[]string{"syncer job apply abc reads the service"}, ExitNeeds},
		{"a plan not approved is listed, not a need", Report{Jobs: []JobWaiting{{Plan: "abc", ToSend: 3}}}, false, nil, ExitOK},
		{"an active alert", Report{Alerts: []Alert{{Key: "dq_exceptions", What: "data quality lists 61 exceptions"}}}, false,
			[]string{"alert dq_exceptions: data quality lists 61 exceptions"}, ExitNeeds},
		{"an unreadable journal", Report{Unreadable: []string{"job journal /x: IO Error"}}, false, []string{"job journal /x: IO Error"}, ExitNeeds},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := tt.r
			r.At, r.sources = now, map[string]bool{"wh": !tt.noWH}
			if r.Syncer == nil {
				r.Syncer = &Syncer{}
			}
			r.judge(Sources{DB: "/srv/billsync.duckdb", StaleAfter: 26 * time.Hour})
			if len(r.Needs) != len(tt.want) {
				t.Fatalf("needs %q, want %d like %q", r.Needs, len(tt.want), tt.want)
			}
			for i, w := range tt.want {
				if !strings.Contains(r.Needs[i], w) {
					t.Errorf("need %d: %q lacks %q", i, r.Needs[i], w)
				}
			}
			if rc := r.ExitCode(); rc != tt.wantRC {
				t.Errorf("exit %d, want %d", rc, tt.wantRC)
			}
		})
	}
}

// TestLakeBehindCountsPublishedRuns: the lake's backlog as the recorder keeps it over a week a
// person would see: two published runs whose commits failed, a sync that failed (nothing
// published, nothing more behind), a restart of the syncer, then a commit that lands.
func TestLakeBehindCountsPublishedRuns(t *testing.T) {
	path := filepath.Join(t.TempDir(), StateName)
	rec := NewRecorder(path, "daemon", "0 2 * * *", "Asia/Jakarta", slog.New(slog.DiscardHandler))
	day := time.Date(2026, 11, 1, 2, 0, 0, 0, time.UTC)
	steps := []struct {
		status, lake string
		restart      bool
		behind       int
		note         string
	}{
		{"succeeded", "failed: open the lake's catalog: connection refused", false, 1, "behind the published warehouse by 1 run (since 2026-11-01 02:00 UTC): open the lake's catalog: connection refused"},
		{"partial", "failed after 3 snapshots: lake table invoices: commit: disk full", false, 2, "by 2 runs (since 2026-11-01 02:00 UTC): failed after 3 snapshots: lake table invoices: commit: disk full"},
		{"failed", "", false, 2, "by 2 runs"},
		{"cancelled", "", true, 2, "by 2 runs"},
		{"succeeded", "committed 14 snapshots (0 retries) in 2s", false, 0, ""},
	}
	for i, st := range steps {
		if st.restart {
			rec = NewRecorder(path, "daemon", "0 2 * * *", "Asia/Jakarta", slog.New(slog.DiscardHandler))
		}
		at := day.AddDate(0, 0, i)
		rec.RunFinished(map[string]Attempt{"toko": {RunID: int64(i + 1), Status: st.status, StartedAt: at, FinishedAt: at, Lake: st.lake}})
		s, err := ReadState(path)
		if err != nil {
			t.Fatal(err)
		}
		got := s.Attempts["toko"]
		note := rec.LakeBehind()
		if got.LakeBehind != st.behind || (st.note == "") != (note == "") || !strings.Contains(note, st.note) {
			t.Errorf("step %d (%s, %q): behind %d, note %q; want %d, %q", i+1, st.status, st.lake, got.LakeBehind, note, st.behind, st.note)
		}
	}
}
