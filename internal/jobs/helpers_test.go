package jobs_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/billsync/billsync/internal/api"
	"github.com/billsync/billsync/internal/config"
	"github.com/billsync/billsync/internal/fetch"
	"github.com/billsync/billsync/internal/jobs"
	"github.com/billsync/billsync/internal/sandbox"
	"github.com/billsync/billsync/internal/syncrun"
	"github.com/billsync/billsync/internal/warehouse"
)

const (
	testKey   = "sk-jobs-test-4b3a2c1d-secret"
	roKey     = "sk-jobs-readonly-77aa-secret"
	testSeed  = 7
	testScale = 0.05
)

var testNow = time.Date(2026, 11, 1, 3, 0, 0, 0, time.UTC)

// env is one simulator over real HTTP, the warehouse synced from an identical simulator, and a journal.
type env struct {
	t       *testing.T
	sb      *sandbox.Server
	srv     *httptest.Server
	dir     string
	wh      string
	journal string
}

func newSandbox(t testing.TB) *sandbox.Server {
	sb, err := sandbox.New(sandbox.Options{Seed: testSeed, Scale: testScale, Now: testNow, Key: testKey, ReadOnlyKey: roKey})
	if err != nil {
		t.Fatal(err)
	}
	return sb
}

func newEnv(t *testing.T) *env {
	t.Helper()
	sb := newSandbox(t)
	srv := httptest.NewServer(sb)
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	return &env{t: t, sb: sb, srv: srv, dir: dir, wh: sharedWarehouse(t), journal: filepath.Join(dir, jobs.JournalFile)}
}

var (
	whOnce sync.Once
	whPath string
	whErr  error
)

// sharedWarehouse syncs one simulator into a warehouse once per test binary. Every test's simulator has the
// same seed and clock, so this warehouse describes each of them as they start.
func sharedWarehouse(t testing.TB) string {
	whOnce.Do(func() {
		dir, err := os.MkdirTemp("", "billsync-jobs-wh-")
		if err != nil {
			whErr = err
			return
		}
		whPath = filepath.Join(dir, "billsync.duckdb")
		sb := newSandbox(t)
		srv := httptest.NewServer(sb)
		defer srv.Close()
		c, err := api.New(api.Config{BaseURL: srv.URL, APIKey: testKey, Unlimited: true})
		if err != nil {
			whErr = err
			return
		}
		_, whErr = syncrun.Run(context.Background(), whPath, []syncrun.Account{{Name: "test", Client: c}},
			syncrun.Options{Options: fetch.Options{Fetch: config.Fetch{PageSize: 100, Concurrency: 4, MaxClockSkew: fetch.TrustServiceClock}, Account: "test"}})
	})
	if whErr != nil {
		t.Fatalf("shared warehouse: %v", whErr)
	}
	return whPath
}

func (e *env) client(key string) *api.Client {
	e.t.Helper()
	c, err := api.New(api.Config{BaseURL: e.srv.URL, APIKey: key, Unlimited: true, MinBackoff: time.Millisecond,
		MaxBackoff: 10 * time.Millisecond, RequestTimeout: 2 * time.Second})
	if err != nil {
		e.t.Fatal(err)
	}
	return c
}

func (e *env) open() *jobs.Journal {
	e.t.Helper()
	j, err := jobs.OpenJournal(context.Background(), e.journal)
	if err != nil {
		e.t.Fatal(err)
	}
	return j
}

// plan plans a file in a journal opened for the call, as the command does.
func (e *env) plan(kind jobs.Kind, file string, mod ...func(*jobs.PlanOptions)) (*jobs.Plan, error) {
	e.t.Helper()
	o := jobs.PlanOptions{Kind: kind, Input: file, Account: "test", Now: testNow, User: "tester", Host: "testhost"}
	for _, m := range mod {
		m(&o)
	}
	wh, err := warehouse.OpenReadOnly(context.Background(), e.wh)
	if err != nil {
		e.t.Fatal(err)
	}
	defer wh.Close()
	j := e.open()
	defer j.Close()
	return j.Plan(context.Background(), wh, o)
}

func (e *env) mustPlan(kind jobs.Kind, file string, mod ...func(*jobs.PlanOptions)) *jobs.Plan {
	e.t.Helper()
	p, err := e.plan(kind, file, mod...)
	if err != nil {
		e.t.Fatalf("plan %s: %v", kind, err)
	}
	return p
}

func (e *env) applyWith(id string, key string, mod ...func(*jobs.ApplyOptions)) (*jobs.RunResult, error) {
	e.t.Helper()
	j := e.open()
	defer j.Close()
	o := jobs.ApplyOptions{Client: e.client(key), Account: "test", BaseURL: e.srv.URL, User: "tester", Host: "testhost",
		Log: slog.New(slog.DiscardHandler), Now: e.sb.Now}
	for _, m := range mod {
		m(&o)
	}
	return j.Apply(context.Background(), id, o)
}

func (e *env) apply(id string, mod ...func(*jobs.ApplyOptions)) *jobs.RunResult {
	e.t.Helper()
	r, err := e.applyWith(id, testKey, mod...)
	if err != nil {
		e.t.Fatalf("apply %s: %v", id, err)
	}
	return r
}

// file writes an input file under the test's directory.
func (e *env) file(name string, lines ...string) string {
	e.t.Helper()
	p := filepath.Join(e.dir, name)
	if err := os.WriteFile(p, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		e.t.Fatal(err)
	}
	return p
}

// posts counts the POSTs the simulator saw under a path.
func (e *env) posts(prefix string) int {
	n := 0
	for _, r := range e.sb.Requests() {
		if r.Method == "POST" && strings.HasPrefix(r.Path, prefix) {
			n++
		}
	}
	return n
}

func (e *env) requests() int { return len(e.sb.Requests()) }

// records decodes a simulator collection.
func records[T any](e *env, collection string) []T {
	e.t.Helper()
	var out []T
	for _, raw := range e.sb.Dump(collection) {
		var v T
		if err := json.Unmarshal(raw, &v); err != nil {
			e.t.Fatalf("%s: %v", collection, err)
		}
		out = append(out, v)
	}
	return out
}

type simCustomer struct {
	ID, Email, Name, Mobile string
}

type simProduct struct {
	ID, Name, Type, SubType, Status string
}

type simLedger struct {
	ID, CustomerID, ProductID, Type string
	Credit, Debit                   int64
}

type simLicense struct {
	LicenseCode, ProductID, Status string
}

func (e *env) customers(n int) []simCustomer {
	e.t.Helper()
	all := records[simCustomer](e, "customers")
	seen := map[string]int{}
	for _, c := range all {
		seen[strings.ToLower(c.Email)]++
	}
	var out []simCustomer
	for _, c := range all {
		if seen[strings.ToLower(c.Email)] == 1 && strings.Contains(c.Email, "@") && len(out) < n {
			out = append(out, c)
		}
	}
	if len(out) < n {
		e.t.Fatalf("the simulator has only %d customers with a unique e-mail, want %d", len(out), n)
	}
	return out
}

func (e *env) product(match func(simProduct) bool) simProduct {
	e.t.Helper()
	for _, p := range records[simProduct](e, "products") {
		if p.Status == "active" && match(p) {
			return p
		}
	}
	e.t.Fatal("no matching product in the simulator")
	return simProduct{}
}

func creditUsage(p simProduct) bool { return p.SubType == "credit_usage" }

// balance is the simulator's own balance of a customer for a product, and its count of top-up entries.
func (e *env) balance(customerID, productID string) (balance int64, topups int) {
	for _, l := range records[simLedger](e, "credit_ledger") {
		if l.CustomerID == customerID && l.ProductID == productID {
			balance += l.Credit - l.Debit
			if l.Type == "MERCHANT_TOPUP" {
				topups++
			}
		}
	}
	return balance, topups
}

func inputErrors(t *testing.T, err error) jobs.InputErrors {
	t.Helper()
	var ie jobs.InputErrors
	if !errors.As(err, &ie) {
		t.Fatalf("want InputErrors, got %v", err)
	}
	return ie
}

// states maps each action's line to its state.
func states(p *jobs.Plan) map[int]jobs.State {
	out := map[int]jobs.State{}
	for _, a := range p.Actions {
		out[a.Line] = a.State
	}
	return out
}

func jakarta(t *testing.T) *time.Location {
	loc, err := time.LoadLocation("Asia/Jakarta")
	if err != nil {
		t.Fatal(err)
	}
	return loc
}

func jsonUnmarshal(raw []byte, v any) {
	if err := json.Unmarshal(raw, v); err != nil {
		panic(err)
	}
}
