package syncrun_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/billsync/billsync/internal/api"
	"github.com/billsync/billsync/internal/config"
	"github.com/billsync/billsync/internal/fetch"
	"github.com/billsync/billsync/internal/sandbox"
	"github.com/billsync/billsync/internal/syncrun"
	"github.com/billsync/billsync/internal/warehouse"
	"github.com/billsync/billsync/queries"
)

// heapBound is the most Go heap in use a sync may reach against any of the misbehaving servers
// below (the endless credit history is the largest: its batches are merged every
// warehouse.DefaultFanoutBatchBytes, so two of them, a page in flight per request and the simulator
// itself stay well under it). Before the guards the endless cases grew without limit.
const heapBound = 400 << 20

// stopBound is how long a sync against a misbehaving server may take to stop on this machine.
const stopBound = 30 * time.Second

// heapPeak samples the Go heap in use until stop is called, and returns the peak.
func heapPeak() (stop func() uint64) {
	var peak atomic.Uint64
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		var ms runtime.MemStats
		for {
			runtime.ReadMemStats(&ms)
			if ms.HeapInuse > peak.Load() {
				peak.Store(ms.HeapInuse)
			}
			select {
			case <-done:
				return
			case <-time.After(5 * time.Millisecond):
			}
		}
	}()
	return func() uint64 {
		close(done)
		<-finished
		return peak.Load()
	}
}

// keyFragment returns a run of 6 characters of the key found in s, "" when none.
func keyFragment(s string) string {
	for i := 0; i+6 <= len(testKey); i++ {
		if f := testKey[i : i+6]; strings.Contains(s, f) {
			return f
		}
	}
	return ""
}

// keyInWarehouse returns where a fragment of the key is stored in any text column of the DuckDB
// file at path, "" when nowhere.
func keyInWarehouse(t *testing.T, path string) string {
	t.Helper()
	if _, err := os.Stat(path); err != nil {
		return ""
	}
	db, err := warehouse.OpenReadOnly(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	cols := rows(t, db, `SELECT table_name, column_name FROM information_schema.columns
		WHERE data_type IN ('VARCHAR', 'JSON') AND table_schema = 'main'`)
	for _, c := range cols {
		for i := 0; i+6 <= len(testKey); i++ {
			q := fmt.Sprintf(`SELECT count(*) FROM %q WHERE contains(%q::VARCHAR, ?)`, c[0], c[1])
			if n := rows(t, db, q, testKey[i:i+6])[0][0].(int64); n > 0 {
				return fmt.Sprintf("%s.%s", c[0], c[1])
			}
		}
	}
	return ""
}

// TestMisbehavingService: for each way a service can misbehave, a sync stops in seconds with
// bounded memory and a located error, publishes nothing (the previous warehouse stays byte for
// byte), and no fragment of the key is in the error, the logs or either DuckDB file.
func TestMisbehavingService(t *testing.T) {
	catcher := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.Errorf("the redirect target was called: %s %s (Authorization %q)", r.Method, r.URL, r.Header.Get("Authorization"))
	}))
	defer catcher.Close()
	tests := []struct {
		name   string
		faults sandbox.Faults
		once   sandbox.FaultKind // FailNext once under faults.PathPrefix instead of the fractions
		want   []string          // all in the error
	}{
		{"customers list endless, new records on every page", sandbox.Faults{PathPrefix: "/hl/v1/customer", EndlessList: 1}, "",
			[]string{"customers: GET /hl/v1/customer page ", "the server announced (pageCount", "; stopped"}},
		{"the same page forever", sandbox.Faults{PathPrefix: "/hl/v1/customer", SamePageForever: 1}, "",
			[]string{"GET /hl/v1/customer page 2: the same ", " ids as page 1; stopped"}},
		{"pageCount 1000000, later pages empty", sandbox.Faults{PathPrefix: "/hl/v1/invoice", InflatedPageCount: 1}, "",
			[]string{"invoices: GET /hl/v1/invoice page "}},
		{"webhook cursor alternates between two values", sandbox.Faults{PathPrefix: "/hl/v2/webhooks", CursorLoop: 1}, "",
			[]string{"webhook_deliveries: GET /hl/v2/webhooks/new-history page ", "; stopped"}},
		{"credit history endless", sandbox.Faults{PathPrefix: "/credit/v1/credit/customer/paginate-credit-history/", EndlessCredit: 1}, "",
			[]string{"credit history of customer ", "page 1001: past the ceiling of 1000 pages", "pageCount 100000000"}},
		{"createdAt in epoch seconds", sandbox.Faults{PathPrefix: "/hl/v1/customer", EpochSeconds: 1}, "",
			[]string{"merge customers: ", "customers page 1 item 0 (id ", "looks like epoch seconds, not milliseconds", "nothing merged"}},
		{"createdAt 0", sandbox.Faults{PathPrefix: "/hl/v1/reviews", EpochZero: 1}, "",
			[]string{"reviews page 1 item 0 (id ", "createdAt 0 is before 2000-01-01"}},
		{"createdAt in epoch microseconds", sandbox.Faults{PathPrefix: "/hl/v1/invoice", EpochMicros: 1}, "",
			[]string{"invoices page 1 item 0 (id ", "looks like epoch microseconds, not milliseconds"}},
		{"a webhook delivery dated 2999", sandbox.Faults{PathPrefix: "/hl/v2/webhooks"}, sandbox.FaultFutureTime,
			[]string{"webhook_deliveries page 1 item 0 (id ", `createdAt "2999-01-01T00:00:00.000Z" is more than a day after the service's clock (its Date header: 2026-11-01 04:00 UTC`}},
		{"a customer's name not UTF-8", sandbox.Faults{PathPrefix: "/hl/v1/customer", InvalidUTF8: 1}, "",
			[]string{`customers: page 1 of /hl/v1/customer: GET /hl/v1/customer page 1: item 0 (id "`, `the text in "name" is not UTF-8 (byte 0xe9 at byte `,
				"the service sent it in another encoding"}},
		{"a customer giving its id twice", sandbox.Faults{PathPrefix: "/hl/v1/customer"}, sandbox.FaultRepeatedKey,
			[]string{"GET /hl/v1/customer page 1 item 0 (id ", `gives "id" twice, so it has no single reading; stopped`}},
		{"302 to another port", sandbox.Faults{RedirectTo: catcher.URL, Redirect: 1}, "",
			[]string{"HTTP 302 redirect to " + catcher.URL + "/hl/", "refused: another host or port"}},
		{"a 500 echoing the key across the cut", sandbox.Faults{EchoKey500: 1}, "",
			[]string{"HTTP 500 Internal Server Error: body \"<html><body><h1>500 Internal Server Error</h1><pre>", "[redacted]", "(after 8 attempts)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, 0.01)
			e.sync(e.opts())
			before := fileHash(t, e.path)
			if tt.once != "" {
				if err := e.sb.FailNext(tt.once, 1, tt.faults.PathPrefix); err != nil {
					t.Fatal(err)
				}
			} else if err := e.sb.SetFaults(tt.faults); err != nil {
				t.Fatal(err)
			}
			e.sb.Advance(time.Hour) // the next run has something new to read
			ctx, cancel := context.WithTimeout(context.Background(), 2*stopBound)
			defer cancel()
			peak := heapPeak()
			start := time.Now()
			o := e.opts()
			if strings.HasPrefix(tt.faults.PathPrefix, "/credit/") {
				// Credit histories are read only for a reason: an hour-long refresh bound makes every
				// customer due again, so the second run reads the (misbehaving) credit histories.
				o.CreditRefresh = time.Hour
			}
			_, err := syncrun.Run(ctx, e.path, []syncrun.Account{{Name: "test", Client: e.client()}}, o)
			took := time.Since(start)
			heap := peak()
			t.Logf("stopped after %s, heap peak %d MiB: %v", took.Round(time.Millisecond), heap>>20, err)
			if err == nil {
				t.Fatal("the sync succeeded against a misbehaving service")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error lacks %q:\n%v", w, err)
				}
			}
			if took > stopBound {
				t.Errorf("took %s to stop, want under %s", took, stopBound)
			}
			if heap > heapBound {
				t.Errorf("heap peaked at %d MiB, want under %d MiB", heap>>20, heapBound>>20)
			}
			if after := fileHash(t, e.path); after != before {
				t.Error("the published warehouse changed")
			}
			if f := keyFragment(err.Error() + e.logs.String()); f != "" {
				t.Errorf("key fragment %q in the error or the logs", f)
			}
			for _, p := range []string{e.path, e.path + ".building"} {
				if where := keyInWarehouse(t, p); where != "" {
					t.Errorf("key fragment stored in %s of %s", where, p)
				}
			}
			// the service behaves again: the next run resumes and mirrors everything
			e.sb.SetFaults(sandbox.Faults{})
			e.sync(e.opts())
			e.assertMirrors()
		})
	}
}

// TestConflictingDuplicates: a list sends one id on pages 1 and 2 with a different name and e-mail,
// and again when paged once more. The run publishes, partial: the last version read is kept, both
// versions are in data_quality_conflicts with where each came from, the stream is marked partial
// with the reason, and no deletion is decided from that list.
func TestConflictingDuplicates(t *testing.T) {
	e := newEnv(t, 0.02)
	if err := e.sb.SetFaults(sandbox.Faults{PathPrefix: "/hl/v1/customer", ConflictingDuplicate: 1}); err != nil {
		t.Fatal(err)
	}
	o := e.opts()
	o.PageSize = 10 // several pages
	sum := e.sync(o)
	if sum.Conflicts != 1 {
		t.Fatalf("%d conflicts reported, want 1", sum.Conflicts)
	}
	got := e.query(`SELECT entity, stream, path, first_page, first_item, first_raw->>'$.name', second_page, second_item,
		second_raw->>'$.name', id = (first_raw->>'$.id') AND id = (second_raw->>'$.id') FROM data_quality_conflicts`)
	if len(got) != 1 {
		t.Fatalf("data_quality_conflicts: %v", got)
	}
	r := got[0]
	first, second := r[5].(string), r[8].(string)
	if r[0] != "customers" || r[1] != "customers" || r[2] != "/hl/v1/customer" || r[3] != int32(1) || r[4] != int32(0) ||
		r[6].(int32) < 2 || r[7] != int32(0) || strings.HasPrefix(first, "Versi Lain") || second != "Versi Lain "+first || r[9] != true {
		t.Errorf("conflict row %v", r)
	}
	kept := e.query(`SELECT c.name FROM customers c JOIN data_quality_conflicts d USING (id)`)
	if len(kept) != 1 || kept[0][0] != second {
		t.Errorf("kept %v, want the last version read (%q)", kept, second)
	}
	st := e.query(`SELECT complete, error FROM sync_streams WHERE stream = 'customers'`)
	if len(st) != 1 || st[0][0] != false || !strings.Contains(fmt.Sprint(st[0][1]), "1 conflicting duplicates, the last version read kept; see data_quality_conflicts") {
		t.Errorf("customers stream %v, want partial with the reason", st)
	}
	if runs := e.query(`SELECT status FROM sync_runs`); len(runs) != 1 || runs[0][0] != "partial" {
		t.Errorf("runs %v, want one partial", runs)
	}
	if !strings.Contains(e.logs.String(), "conflicting duplicates kept as last read") {
		t.Error("no warning logged")
	}
	// the data-quality report's query shows it as the finance team reads it
	sqlText, err := fs.ReadFile(queries.FS, "dq_conflicts.sql")
	if err != nil {
		t.Fatal(err)
	}
	db, err := warehouse.OpenReadOnly(context.Background(), e.path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	conn, err := db.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	stmts := strings.Split(strings.TrimSpace(string(sqlText)), ";\n")
	for _, st := range stmts[:len(stmts)-1] {
		if _, err := conn.ExecContext(context.Background(), st); err != nil {
			t.Fatalf("%s: %v", st, err)
		}
	}
	var entity, firstRead, secondRead, fields, keptVersion string
	err = conn.QueryRowContext(context.Background(), `SELECT entity, path || ' page ' || first_page || ' item ' || first_item, `+
		`path || ' page ' || second_page || ' item ' || second_item, differing_fields, kept_version FROM (`+
		strings.TrimSuffix(stmts[len(stmts)-1], ";")+`)`).Scan(&entity, &firstRead, &secondRead, &fields, &keptVersion)
	if err != nil {
		t.Fatal(err)
	}
	if entity != "customers" || firstRead != "/hl/v1/customer page 1 item 0" || !strings.HasPrefix(secondRead, "/hl/v1/customer page ") ||
		fields != "email, name" || !strings.Contains(keptVersion, `"name":"Versi Lain `) {
		t.Errorf("report row: %s | %s | %s | %s | %s", entity, firstRead, secondRead, fields, keptVersion)
	}
}

// TestRedirectsKeepTheKey: an https service redirecting to plain http, and a 307 on add-credit to
// another host: the key never leaves for the target and the top-up is not posted again.
func TestRedirectsKeepTheKey(t *testing.T) {
	var caught atomic.Int64
	catcher := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { caught.Add(1) }))
	defer catcher.Close()
	sb, err := sandbox.New(sandbox.Options{Seed: 7, Scale: 0.01, Now: testNow, Key: testKey})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewTLSServer(sb)
	defer srv.Close()
	c, err := api.New(api.Config{BaseURL: srv.URL, APIKey: testKey, Unlimited: true, HTTPClient: srv.Client(),
		MinBackoff: time.Millisecond, MaxBackoff: 2 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	sb.SetFaults(sandbox.Faults{Redirect: 1, RedirectTo: "http://" + strings.TrimPrefix(catcher.URL, "http://")})
	_, err = syncrun.Run(context.Background(), filepath.Join(t.TempDir(), "w.duckdb"), []syncrun.Account{{Name: "test", Client: c}}, syncrun.Options{Options: fetch.Options{Account: "test", Fetch: config.Fetch{MaxClockSkew: fetch.TrustServiceClock}}})
	if err == nil || !strings.Contains(err.Error(), "redirect to "+catcher.URL) || !strings.Contains(err.Error(), "refused: scheme http differs from the configured https") {
		t.Errorf("https -> http: %v", err)
	}
	sb.SetFaults(sandbox.Faults{Redirect: 1, RedirectTo: catcher.URL})
	var cust, prod struct {
		ID string `json:"id"`
	}
	json.Unmarshal(sb.Dump("customers")[0], &cust)
	for _, raw := range sb.Dump("products") {
		var p struct {
			ID, Type, SubType string
		}
		json.Unmarshal(raw, &p)
		if p.SubType == "credit_usage" {
			prod.ID = p.ID
			break
		}
	}
	before := len(sb.Dump("credit_ledger"))
	_, err = c.AddCredit(context.Background(), api.AddCreditRequest{CustomerID: cust.ID, ProductID: prod.ID, Amount: 100})
	if err == nil || !api.IsUnknownOutcome(err) || !strings.Contains(err.Error(), "HTTP 307 redirect to "+catcher.URL+"/credit/v1/credit/customer/add-credit refused") {
		t.Errorf("307 on add-credit: %v", err)
	}
	if n := caught.Load(); n != 0 {
		t.Errorf("the redirect target got %d requests", n)
	}
	if after := len(sb.Dump("credit_ledger")); after != before {
		t.Errorf("credit ledger %d -> %d entries: the redirect fault applied the top-up", before, after)
	}
}

// TestCursorHeldAtServerClock: a delivery dated 12 hours ahead passes validation (within a day) but
// does not carry the webhook cursor past the server's clock, so deliveries of the next hours are
// still read by the next run.
func TestCursorHeldAtServerClock(t *testing.T) {
	e := newEnv(t, 0.01)
	ahead := testNow.Add(12 * time.Hour).Format("2006-01-02T15:04:05.000Z")
	done := false
	var mu sync.Mutex
	heal := e.corrupt(func(r *http.Request) bool { return strings.HasPrefix(r.URL.Path, "/hl/v2/webhooks") },
		func(body string) string {
			mu.Lock()
			defer mu.Unlock()
			if done {
				return body
			}
			i := strings.LastIndex(body, `"createdAt":"`)
			if i < 0 {
				return body
			}
			done = true
			j := i + len(`"createdAt":"`)
			return body[:j] + ahead + body[j+len(ahead):]
		})
	e.sync(e.opts())
	heal()
	cur := e.query(`SELECT value FROM sync_cursors WHERE stream = 'webhook_deliveries'`)
	if len(cur) != 1 || cur[0][0] != fmt.Sprint(testNow.UnixMilli()) {
		t.Fatalf("cursor %v, want the server's clock %d, not the future delivery's time", cur, testNow.UnixMilli())
	}
	if !strings.Contains(e.logs.String(), "webhook cursor held at the run's clock") {
		t.Error("no warning logged")
	}
	e.sb.Advance(3 * time.Hour)
	e.sync(e.opts())
	e.assertMirrors()
}
