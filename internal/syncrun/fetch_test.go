package syncrun_test

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/billsync/billsync/internal/api"
	"github.com/billsync/billsync/internal/config"
	"github.com/billsync/billsync/internal/entity"
	"github.com/billsync/billsync/internal/fetch"
	"github.com/billsync/billsync/internal/logbuf"
	"github.com/billsync/billsync/internal/sandbox"
	"github.com/billsync/billsync/internal/syncrun"
	"github.com/billsync/billsync/internal/warehouse"
)

const testKey = "sk-test-9f8e7d6c5b4a-secret"

var testNow = time.Date(2026, 11, 1, 3, 0, 0, 0, time.UTC)

// env is one simulator served over real HTTP and one warehouse path.
type env struct {
	t    *testing.T
	sb   *sandbox.Server
	srv  *httptest.Server
	path string
	logs *logbuf.Buffer
}

func newEnv(t *testing.T, scale float64) *env {
	t.Helper()
	sb, err := sandbox.New(sandbox.Options{Seed: 7, Scale: scale, Now: testNow, Key: testKey})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(sb)
	t.Cleanup(srv.Close)
	return &env{t: t, sb: sb, srv: srv, path: filepath.Join(t.TempDir(), "billsync.duckdb"), logs: &logbuf.Buffer{}}
}

func (e *env) client() *api.Client {
	e.t.Helper()
	c, err := api.New(api.Config{
		BaseURL: e.srv.URL, APIKey: testKey, Unlimited: true,
		MinBackoff: time.Millisecond, MaxBackoff: 20 * time.Millisecond, MaxAttempts: 8,
		Logger: slog.New(slog.NewTextHandler(e.logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
	})
	if err != nil {
		e.t.Fatal(err)
	}
	return c
}

func (e *env) opts() syncrun.Options {
	return syncrun.Options{Options: fetch.Options{
		Fetch:   config.Fetch{PageSize: 100, Concurrency: 4, Details: true, MaxClockSkew: fetch.TrustServiceClock},
		Account: "test", Log: slog.New(slog.NewTextHandler(e.logs, nil)),
	}}
}

func (e *env) sync(o syncrun.Options) fetch.Summary {
	e.t.Helper()
	sums, err := syncrun.Run(context.Background(), e.path, []syncrun.Account{{Name: o.Account, Client: e.client()}}, o)
	if err != nil {
		e.t.Fatalf("sync: %v", err)
	}
	return sums[0]
}

// query opens the published warehouse read-only, runs q and closes it again: DuckDB caches
// instances by path within a process, so a handle kept open would hide the next publish.
func (e *env) query(q string, args ...any) [][]any {
	e.t.Helper()
	db, err := warehouse.OpenReadOnly(context.Background(), e.path)
	if err != nil {
		e.t.Fatal(err)
	}
	defer db.Close()
	return rows(e.t, db, q, args...)
}

func rows(t *testing.T, db *sql.DB, q string, args ...any) [][]any {
	t.Helper()
	rs, err := db.Query(q, args...)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	defer rs.Close()
	cols, _ := rs.Columns()
	var out [][]any
	for rs.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rs.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		out = append(out, vals)
	}
	if err := rs.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func (e *env) count(q string, args ...any) int64 {
	e.t.Helper()
	r := e.query(q, args...)
	return r[0][0].(int64)
}

// truth is the simulator's own view of a collection: record id -> raw record.
func (e *env) truth(collection string) map[string]json.RawMessage {
	e.t.Helper()
	out := map[string]json.RawMessage{}
	for _, raw := range e.sb.Dump(collection) {
		var r struct {
			ID     string `json:"id"`
			Status string `json:"status"`
		}
		if err := json.Unmarshal(raw, &r); err != nil || r.ID == "" {
			e.t.Fatalf("%s: record without id: %s", collection, raw)
		}
		if collection == "products" && r.Status == "deleted" {
			continue // the by-type lists leave deleted products out; only search shows them
		}
		out[r.ID] = raw
	}
	return out
}

// tables maps each warehouse table checked record-for-record to its simulator collection: every
// list stream's, the credit ledger and the webhook history (the names are the same).
var tables = func() (out []struct{ table, collection string }) {
	for _, t := range syncrun.MirroredTables() {
		out = append(out, struct{ table, collection string }{t, t})
	}
	return out
}()

// assertMirrors checks that every live record of every list is in the warehouse exactly once and
// that rows the simulator no longer has are marked deleted upstream, not dropped.
func (e *env) assertMirrors() {
	e.t.Helper()
	e.assertHas(e.truthAll(), true)
}

func (e *env) truthAll() map[string]map[string]json.RawMessage {
	out := map[string]map[string]json.RawMessage{}
	for _, tc := range tables {
		out[tc.collection] = e.truth(tc.collection)
	}
	return out
}

// assertHas checks that every record of truth is live in the warehouse exactly once; with exact,
// also that nothing else is live.
func (e *env) assertHas(truth map[string]map[string]json.RawMessage, exact bool) {
	e.t.Helper()
	for _, tc := range tables {
		want := truth[tc.collection]
		got := e.query(fmt.Sprintf(
			"SELECT id, count(*), bool_or(deleted_upstream_at IS NULL) FROM %s WHERE account = 'test' GROUP BY id", tc.table))
		live := map[string]bool{}
		for _, r := range got {
			id, n := r[0].(string), r[1].(int64)
			if n != 1 {
				e.t.Errorf("%s: id %s stored %d times", tc.table, id, n)
			}
			if r[2].(bool) {
				live[id] = true
			}
		}
		for id := range want {
			if !live[id] {
				e.t.Errorf("%s: record %s missing (or marked deleted) in the warehouse", tc.table, id)
			}
		}
		for id := range live {
			if _, ok := want[id]; exact && !ok && tc.table != "credit_ledger" && tc.table != "webhook_deliveries" {
				e.t.Errorf("%s: id %s is live in the warehouse but gone from the service", tc.table, id)
			}
		}
		if len(want) == 0 {
			e.t.Errorf("%s: the simulator has no records; the test proves nothing", tc.collection)
		}
	}
}

func TestSyncMirrorsEveryList(t *testing.T) {
	e := newEnv(t, 0.05)
	sum := e.sync(e.opts())
	e.assertMirrors()
	if sum.CreditPending != 0 || sum.DetailPending != 0 {
		t.Errorf("unbudgeted run left work: %+v", sum)
	}

	// Times: epoch ms and ISO 8601 both land as the same UTC instant.
	for _, tc := range []struct{ table, collection string }{{"customers", "customers"}, {"credit_ledger", "credit_ledger"}, {"webhook_deliveries", "webhook_deliveries"}} {
		for id, raw := range e.truth(tc.collection) {
			var r struct {
				CreatedAt json.RawMessage `json:"createdAt"`
			}
			json.Unmarshal(raw, &r)
			want := parseAPITime(t, r.CreatedAt)
			got := e.query(fmt.Sprintf("SELECT created_at FROM %s WHERE id = ?", tc.table), id)[0][0].(time.Time)
			if !got.Equal(want) || got.Location() != time.UTC {
				t.Errorf("%s %s: created_at %v, want %v (UTC)", tc.table, id, got, want)
			}
			break
		}
	}
	// Raw JSON is kept verbatim.
	for id, raw := range e.truth("invoices") {
		got := e.query("SELECT raw::VARCHAR FROM invoices WHERE id = ?", id)[0][0].(string)
		if !jsonEqual(t, got, string(raw)) {
			t.Errorf("invoice %s raw = %s, want %s", id, got, raw)
		}
		break
	}
	// Every product type was listed, and details filled the detail-only columns.
	if n := e.count("SELECT count(*) FROM products WHERE user_id IS NULL AND deleted_upstream_at IS NULL"); n != 0 {
		t.Errorf("%d products without detail columns after an unbudgeted run", n)
	}
	if n := e.count("SELECT count(DISTINCT type) FROM products"); n != 19 {
		t.Errorf("products cover %d types, want all 19", n)
	}
	if n := e.count("SELECT count(*) FROM sync_runs WHERE status = 'succeeded'"); n != 1 {
		t.Errorf("sync_runs has %d succeeded runs, want 1", n)
	}
}

func TestSecondRunChangesNothing(t *testing.T) {
	e := newEnv(t, 0.03)
	e.sync(e.opts())
	before := e.snapshot()
	sum := e.sync(e.opts())
	after := e.snapshot()
	if !slices.Equal(before, after) {
		t.Errorf("second run changed data:\nbefore %v\nafter  %v", before, after)
	}
	for _, s := range sum.Streams {
		if s.Merge.Inserted+s.Merge.Updated+s.Merge.Deleted+s.Merge.Restored != 0 {
			t.Errorf("stream %s merged changes on an unchanged service: %+v", s.Stream, s.Merge)
		}
	}
}

// snapshot fingerprints the data tables (not the run bookkeeping).
func (e *env) snapshot() []string {
	var out []string
	for _, tc := range tables {
		r := e.query(fmt.Sprintf("SELECT count(*), coalesce(sum(hash(id, raw::VARCHAR, deleted_upstream_at)), 0)::VARCHAR FROM %s", tc.table))
		out = append(out, fmt.Sprintf("%s=%v/%v", tc.table, r[0][0], r[0][1]))
	}
	r := e.query("SELECT count(*) FROM record_changes")
	return append(out, fmt.Sprintf("record_changes=%v", r[0][0]))
}

func TestClockAdvanceRecordsChanges(t *testing.T) {
	e := newEnv(t, 0.05)
	e.sync(e.opts())
	ledger0 := e.count("SELECT count(*) FROM credit_ledger")
	hooks0 := e.count("SELECT count(*) FROM webhook_deliveries")

	// An e-mail fix through the real API, then a month of simulated business.
	var cust struct {
		Email string `json:"email"`
	}
	// A well-formed address no other customer shares, even in another case: the service renames
	// one of the customers holding fromEmail, and the history is then checked for that one.
	holders := map[string]int{}
	for _, raw := range e.truth("customers") {
		json.Unmarshal(raw, &cust)
		holders[strings.ToLower(cust.Email)]++
	}
	for _, raw := range e.truth("customers") {
		json.Unmarshal(raw, &cust)
		if strings.Contains(cust.Email, "@") && !strings.ContainsAny(cust.Email, " ,") &&
			cust.Email == strings.ToLower(cust.Email) && holders[cust.Email] == 1 {
			break
		}
	}
	newEmail := "fixed." + cust.Email
	if _, err := e.client().UpdateCustomerEmail(context.Background(), cust.Email, newEmail); err != nil {
		t.Fatalf("update e-mail %q: %v", cust.Email, err)
	}
	e.sb.Advance(30 * 24 * time.Hour)
	observed := e.sb.Now()
	e.sync(e.opts())
	e.assertMirrors()

	if n := e.count("SELECT count(*) FROM credit_ledger"); n <= ledger0 {
		t.Errorf("credit ledger did not grow after 72 simulated hours: %d -> %d", ledger0, n)
	}
	if n := e.count("SELECT count(*) FROM webhook_deliveries"); n <= hooks0 {
		t.Errorf("webhook deliveries did not grow: %d -> %d", hooks0, n)
	}
	// Invoices paid while the clock moved carry a status change observed at the simulator's time.
	paid := e.query(`SELECT record_id, old_value, new_value, observed_at FROM record_changes
		WHERE entity = 'invoices' AND field = 'status' AND new_value = 'paid'`)
	if len(paid) == 0 {
		t.Fatal("no invoice status change to paid recorded")
	}
	for _, r := range paid {
		at := r[3].(time.Time)
		if at.Before(observed.Add(-time.Minute)) || at.After(observed.Add(time.Minute)) {
			t.Errorf("invoice %s paid observed at %v, want the simulator's clock %v", r[0], at, observed)
		}
	}
	// Unpaid transactions that were settled or expired are marked, not dropped.
	if n := e.count("SELECT count(*) FROM unpaid_transactions WHERE deleted_upstream_at IS NOT NULL"); n == 0 {
		t.Error("no unpaid transaction marked deleted upstream after invoices were paid")
	}
	if n := e.count(`SELECT count(*) FROM record_changes WHERE entity = 'customers' AND field = 'email'
		AND old_value = ? AND new_value = ?`, cust.Email, newEmail); n != 1 {
		t.Errorf("e-mail change %s -> %s recorded %d times, want once; e-mail changes touching either: %v", cust.Email, newEmail, n,
			e.query(`SELECT record_id, old_value, new_value, observed_at FROM record_changes WHERE entity = 'customers'
				AND field = 'email' AND (old_value IN (?, ?) OR new_value IN (?, ?))`, cust.Email, newEmail, cust.Email, newEmail))
	}
}

func TestFaultMixLosesAndDuplicatesNothing(t *testing.T) {
	e := newEnv(t, 0.03)
	// 429s carry Retry-After: 1 and pause the whole client, so they are rarer than the rest.
	if err := e.sb.SetFaults(sandbox.Faults{
		Seed:              3,
		RateLimit:         0.01,
		ServerError:       0.05,
		Reset:             0.03,
		Truncate:          0.03,
		TruncateDrop:      0.02,
		StringNumbers:     0.2,
		InsertWhilePaging: 0.05,
		DuplicatePage:     0.05,
	}); err != nil {
		t.Fatal(err)
	}
	before := e.truthAll()
	sum := e.sync(e.opts())
	// Everything that existed before the run arrived once; records inserted while the run paged
	// may only arrive with the next run.
	e.assertHas(before, false)
	if sum.Retries == 0 {
		t.Error("the fault mix caused no retry; the test proves nothing")
	}
	e.sb.SetFaults(sandbox.Faults{})
	e.sync(e.opts())
	e.assertMirrors()
}

func TestAPIKeyStoredNowhere(t *testing.T) {
	e := newEnv(t, 0.02)
	e.sync(e.opts())
	// One connection for every column: opening the warehouse per query (e.count) was most of
	// this test's time.
	db, err := warehouse.OpenReadOnly(context.Background(), e.path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	cols := rows(t, db, `SELECT table_name, column_name FROM information_schema.columns
		WHERE data_type IN ('VARCHAR', 'JSON') AND table_schema = 'main'`)
	if len(cols) == 0 {
		t.Fatal("no text columns found")
	}
	for _, c := range cols {
		q := fmt.Sprintf(`SELECT count(*) FROM %q WHERE %q::VARCHAR LIKE '%%' || ? || '%%'`, c[0], c[1])
		if n := rows(t, db, q, testKey)[0][0].(int64); n != 0 {
			t.Errorf("API key found in %s.%s", c[0], c[1])
		}
	}
	if strings.Contains(e.logs.String(), testKey) {
		t.Error("API key found in the logs")
	}
	if e.logs.Len() == 0 {
		t.Error("no logs captured; the log check proves nothing")
	}
}

func TestBudgetCarriesCreditHistoryOver(t *testing.T) {
	e := newEnv(t, 0.05)
	o := e.opts()
	o.Details = false
	o.MaxRequests = 1 // the lists always complete; the fan-out gets nothing
	first := e.sync(o)
	if first.CreditPending == 0 {
		t.Fatal("budget of 1 request left no credit history pending")
	}
	for i := 0; ; i++ {
		o.MaxRequests = first.Requests + 40 // room for some customers each run
		s := e.sync(o)
		if s.CreditPending == 0 {
			break
		}
		if s.CreditPending >= first.CreditPending && i > 0 {
			t.Fatalf("run %d made no progress: %d pending", i, s.CreditPending)
		}
		if i > 50 {
			t.Fatal("credit fan-out never finished")
		}
	}
	e.assertMirrors()
	if n := e.count("SELECT count(*) FROM sync_runs WHERE status = 'partial'"); n == 0 {
		t.Error("no run recorded as partial")
	}
}

func parseAPITime(t *testing.T, raw json.RawMessage) time.Time {
	t.Helper()
	var ms int64
	if json.Unmarshal(raw, &ms) == nil {
		return time.UnixMilli(ms).UTC()
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		t.Fatalf("time %s: %v", raw, err)
	}
	ts, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		t.Fatalf("time %q: %v", s, err)
	}
	return ts.UTC()
}

func jsonEqual(t *testing.T, a, b string) bool {
	t.Helper()
	var x, y any
	if err := json.Unmarshal([]byte(a), &x); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(b), &y); err != nil {
		t.Fatal(err)
	}
	xs, _ := json.Marshal(x)
	ys, _ := json.Marshal(y)
	return bytes.Equal(xs, ys)
}

func TestFailedRunIsResumed(t *testing.T) {
	e := newEnv(t, 0.03)
	// Reviews answer 500 for longer than the client retries: that stream fails, the others finish.
	if err := e.sb.FailNext(sandbox.FaultServerError, 1000, "/hl/v1/reviews"); err != nil {
		t.Fatal(err)
	}
	_, err := syncrun.Run(context.Background(), e.path, []syncrun.Account{{Name: "test", Client: e.client()}}, e.opts())
	if err == nil || !strings.Contains(err.Error(), "reviews") {
		t.Fatalf("run error %v, want the reviews stream's failure", err)
	}
	if _, err := os.Stat(e.path); !os.IsNotExist(err) {
		t.Fatalf("a failed first run published a warehouse: %v", err)
	}
	e.sb.SetFaults(sandbox.Faults{}) // also clears pending FailNext faults
	before := len(e.sb.Requests())
	sum := e.sync(e.opts())
	if !sum.Resumed {
		t.Fatal("the next run started over instead of resuming the failed one")
	}
	skipped := map[string]bool{}
	for _, s := range sum.Streams {
		if s.Skipped {
			skipped[s.Stream] = true
		}
	}
	// The failed run completed every other stream of the list phase (the declared lists and the
	// webhook history: internal/entity's catalog, so a new list is checked here too).
	for _, l := range listPhaseStreams(t) {
		if l != "reviews" && !skipped[l] {
			t.Errorf("stream %s was read again; the failed run completed it (skipped: %v)", l, skipped)
		}
	}
	if skipped["reviews"] {
		t.Error("the failed reviews stream was skipped")
	}
	for _, r := range e.sb.Requests()[before:] {
		if r.Path == "/hl/v1/customer" {
			t.Fatal("the resumed run read customers again")
		}
	}
	e.assertMirrors()
}

// listPhaseStreams are the streams of a sync's list phase, from the declarations: every paged
// list and the webhook history (a cursor), not the per-customer and detail fan-outs.
func listPhaseStreams(t *testing.T) []string {
	t.Helper()
	var names []string
	for _, s := range fetch.Streams() {
		d, ok := entity.Get(s.Entity)
		if !ok {
			t.Fatalf("stream %s writes %s, which internal/entity does not declare", s.Name, s.Entity)
		}
		if d.Paging == entity.Pages || d.Paging == entity.Cursor {
			names = append(names, s.Name)
		}
	}
	if !slices.Contains(names, "reviews") || !slices.Contains(names, "customers") {
		t.Fatalf("list phase %v lacks the lists this test fails and reads", names)
	}
	return names
}

// TestSmallBatches runs a sync, a month of changes and a faulty sync with list merges every 37
// records and fan-out merges every 7 requests (queued while the next batch is fetched):
// batching must not lose, duplicate or wrongly delete anything.
func TestSmallBatches(t *testing.T) {
	defer syncrun.SetListBatch(37)()
	defer syncrun.SetFanoutBatch(7, time.Hour)()
	e := newEnv(t, 0.03)
	e.sync(e.opts())
	e.assertMirrors()
	e.sb.Advance(30 * 24 * time.Hour)
	if err := e.sb.SetFaults(sandbox.Faults{Seed: 5, ServerError: 0.05, InsertWhilePaging: 0.05, DuplicatePage: 0.05}); err != nil {
		t.Fatal(err)
	}
	before := e.truthAll()
	e.sync(e.opts())
	e.assertHas(before, false)
	e.sb.SetFaults(sandbox.Faults{})
	e.sync(e.opts())
	e.assertMirrors()
	if n := e.count("SELECT count(*) FROM unpaid_transactions WHERE deleted_upstream_at IS NOT NULL"); n == 0 {
		t.Error("no unpaid transaction marked deleted after a month: batched deletion marking did nothing")
	}
}

// TestBadCreditRecordFailsTheRun: one customer's credit history carries an unreadable time. Its
// batch's merge (queued while the next batch is fetched) fails the run with the record located;
// no customer of that batch is marked fetched, so the next run reads them all again and the
// ledger ends up complete.
func TestBadCreditRecordFailsTheRun(t *testing.T) {
	e := newEnv(t, 0.03)
	var victim string
	if err := json.Unmarshal(e.sb.Dump("credit_ledger")[0], &struct {
		CustomerID *string `json:"customerId"`
	}{&victim}); err != nil || victim == "" {
		t.Fatalf("no credit entry to corrupt: %v", err)
	}
	defer syncrun.SetFanoutBatch(5, time.Hour)() // the bad batch is one of several
	heal := e.corrupt(func(r *http.Request) bool { return strings.HasSuffix(r.URL.Path, "/paginate-credit-history/"+victim) },
		func(body string) string { return strings.Replace(body, `"createdAt":"`, `"createdAt":"yesterday `, 1) })
	_, err := syncrun.Run(context.Background(), e.path, []syncrun.Account{{Name: "test", Client: e.client()}}, e.opts())
	if err == nil || !strings.Contains(err.Error(), "credit_ledger page 1 item 0") || !strings.Contains(err.Error(), `createdAt: "yesterday `) {
		t.Fatalf("run error %v, want the bad credit record located", err)
	}
	heal()
	sum := e.sync(e.opts())
	if !sum.Resumed {
		t.Fatal("the next run did not resume the failed one")
	}
	e.assertMirrors()
}

// TestFanoutBatchClosesByAge: a batch older than its age limit takes no more customers, so a
// throttled run merges (and can lose to a kill) only that much work; here the limit is zero and
// every customer gets its own merge.
func TestFanoutBatchClosesByAge(t *testing.T) {
	defer syncrun.SetFanoutBatch(1000, 0)()
	e := newEnv(t, 0.01)
	o := e.opts()
	o.Details = false
	// A customer without credit entries merges an empty batch, logged at debug only.
	o.Log = slog.New(slog.NewTextHandler(e.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	e.sync(o)
	e.assertMirrors()
	customers := len(e.sb.Dump("customers"))
	if got := strings.Count(e.logs.String(), "msg=merged entity=credit_ledger"); got != customers {
		t.Errorf("%d credit merges for %d customers, want one each", got, customers)
	}
}

// TestBadListRecordFailsTheRun: one invoice on a list page carries an unreadable time, while
// small batches keep several streams' merges running side by side. The invoice batch's merge
// fails the run with the record located (no hang, whatever the other merges were doing), the
// warehouse is not published, and the next run resumes and mirrors every list.
func TestBadListRecordFailsTheRun(t *testing.T) {
	defer syncrun.SetListBatch(23)()
	e := newEnv(t, 0.03)
	heal := e.corrupt(func(r *http.Request) bool { return r.URL.Path == "/hl/v1/invoice" && r.URL.Query().Get("page") == "1" },
		func(body string) string {
			return strings.Replace(body, `"createdAt":`, `"createdAt":"yesterday","x":`, 1)
		})
	_, err := syncrun.Run(context.Background(), e.path, []syncrun.Account{{Name: "test", Client: e.client()}}, e.opts())
	if err == nil || !strings.Contains(err.Error(), "invoices page 1 item 0") || !strings.Contains(err.Error(), `createdAt: "yesterday"`) {
		t.Fatalf("run error %v, want the bad invoice located", err)
	}
	if _, err := os.Stat(e.path); !os.IsNotExist(err) {
		t.Fatalf("a failed first run published a warehouse (stat: %v)", err)
	}
	heal()
	sum := e.sync(e.opts())
	if !sum.Resumed {
		t.Fatal("the next run did not resume the failed one")
	}
	e.assertMirrors()
}

// TestStopDuringListMerges: the run's context is cancelled (SIGTERM, a stop grace that ran out)
// while list streams have merges running and waiting for a merge slot. Run returns the
// cancellation without waiting for the lists to finish, publishes nothing, leaves no merge
// behind it (the build closes), and the next run resumes and mirrors every list.
func TestStopDuringListMerges(t *testing.T) {
	defer syncrun.SetListBatch(11)()
	e := newEnv(t, 0.05)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var mu sync.Mutex
	pages := 0
	e.srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/hl/v1/") {
			mu.Lock()
			pages++
			if pages == 12 { // every list has started and small batches are merging
				cancel()
			}
			mu.Unlock()
		}
		e.sb.ServeHTTP(w, r)
	})
	_, err := syncrun.Run(ctx, e.path, []syncrun.Account{{Name: "test", Client: e.client()}}, e.opts())
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("run error %v, want the cancellation", err)
	}
	if _, err := os.Stat(e.path); !os.IsNotExist(err) {
		t.Fatalf("a stopped first run published a warehouse (stat: %v)", err)
	}
	e.srv.Config.Handler = e.sb
	sum := e.sync(e.opts())
	if !sum.Resumed {
		t.Fatal("the next run did not resume the stopped one")
	}
	e.assertMirrors()
}

// corrupt answers the requests match selects with edit applied to the simulator's body, until
// heal is called; every other request reaches the simulator untouched.
func (e *env) corrupt(match func(*http.Request) bool, edit func(body string) string) (heal func()) {
	var mu sync.Mutex
	on := true
	e.srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		active := on
		mu.Unlock()
		if !active || !match(r) {
			e.sb.ServeHTTP(w, r)
			return
		}
		rec := httptest.NewRecorder()
		e.sb.ServeHTTP(rec, r)
		w.Header().Set("Date", rec.Header().Get("Date")) // the server's clock, which the run observes by
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(rec.Code)
		io.WriteString(w, edit(rec.Body.String()))
	})
	return func() {
		mu.Lock()
		on = false
		mu.Unlock()
	}
}

// The webhook cursor is the newest createdAt of the deliveries read (the merge's parse of it, the
// only one), whatever form the service sent it in.
func TestWebhookCursorIsTheNewestDelivery(t *testing.T) {
	e := newEnv(t, 0.05)
	e.sync(e.opts())
	var newest time.Time
	for _, raw := range e.truth("webhook_deliveries") {
		var r struct {
			CreatedAt json.RawMessage `json:"createdAt"`
		}
		json.Unmarshal(raw, &r)
		if at := parseAPITime(t, r.CreatedAt); at.After(newest) {
			newest = at
		}
	}
	if newest.IsZero() || newest.After(testNow) {
		t.Fatalf("the simulator's newest delivery is at %v: the test proves nothing", newest)
	}
	cur := e.query(`SELECT value FROM sync_cursors WHERE stream = 'webhook_deliveries'`)
	if len(cur) != 1 || cur[0][0] != strconv.FormatInt(newest.UnixMilli(), 10) {
		t.Fatalf("cursor %v, want the newest delivery's createdAt %d (%v)", cur, newest.UnixMilli(), newest)
	}
}
