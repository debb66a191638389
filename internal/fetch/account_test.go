package fetch_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/billsync/billsync/internal/api"
	"github.com/billsync/billsync/internal/config"
	"github.com/billsync/billsync/internal/fetch"
	"github.com/billsync/billsync/internal/logbuf"
	"github.com/billsync/billsync/internal/sandbox"
	"github.com/billsync/billsync/internal/syncdata"
)

// These tests run fetch against the real simulator over HTTP into a sink in memory: what fetch
// decides (paging, guards, passes over a list, what it tells the sink) without DuckDB. The whole
// run, warehouse included, is tested in internal/syncrun.

const testKey = "sk-test-9f8e7d6c5b4a-secret"

var testNow = time.Date(2026, 11, 1, 3, 0, 0, 0, time.UTC)

type memEnv struct {
	t    *testing.T
	sb   *sandbox.Server
	srv  *httptest.Server
	logs *logbuf.Buffer
}

func newMemEnv(t *testing.T, scale float64) *memEnv {
	t.Helper()
	sb, err := sandbox.New(sandbox.Options{Seed: 7, Scale: scale, Now: testNow, Key: testKey})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(sb)
	t.Cleanup(srv.Close)
	return &memEnv{t: t, sb: sb, srv: srv, logs: &logbuf.Buffer{}}
}

func (e *memEnv) opts() fetch.Options {
	f := config.Defaults[config.Fetch]()
	f.Details, f.MaxClockSkew = false, fetch.TrustServiceClock
	return fetch.Options{Fetch: f, Account: "test", Log: slog.New(slog.NewTextHandler(e.logs, nil))}
}

// sync runs fetch.Account into m.
func (e *memEnv) sync(m *memSink, o fetch.Options) (fetch.Summary, error) {
	e.t.Helper()
	c, err := api.New(api.Config{BaseURL: e.srv.URL, APIKey: testKey, Unlimited: true,
		MinBackoff: time.Millisecond, MaxBackoff: 20 * time.Millisecond, MaxAttempts: 8,
		Logger: slog.New(slog.NewTextHandler(e.logs, nil))})
	if err != nil {
		e.t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	return fetch.Account(ctx, c, m.open, o)
}

// live counts the simulator's records of a collection a list returns (the by-type product lists
// leave deleted products out).
func (e *memEnv) live(collection string) int {
	n := 0
	for _, raw := range e.sb.Dump(collection) {
		var r struct{ Status string }
		if json.Unmarshal(raw, &r); collection == "products" && r.Status == "deleted" {
			continue
		}
		n++
	}
	return n
}

// TestListsIntoASink: every list and the webhook history arrive whole, each list in one pass
// that announced what arrived, every stream complete, and the run closed succeeded.
func TestListsIntoASink(t *testing.T) {
	e := newMemEnv(t, 0.02)
	m := newMemSink()
	o := e.opts()
	o.PageSize = 20 // several pages, read concurrently
	sum, err := e.sync(m, o)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range fetch.Streams() {
		if s.Detail || s.Name == "credit_ledger" {
			continue
		}
		if got, want := m.count(string(s.Entity)), e.live(s.Name); got != want || want == 0 {
			t.Errorf("%s: %d records in the sink, the simulator has %d", s.Name, got, want)
		}
		if st := m.streams[s.Name]; !st.Complete || st.Error != "" || st.Records < int64(m.count(string(s.Entity))) {
			t.Errorf("%s: stream recorded %+v", s.Name, st)
		}
		if s.Name == "webhook_deliveries" {
			continue // incremental: never ended as a whole list
		}
		passes := m.passes[string(s.Entity)]
		if len(passes) != 1 || !passes[0].Stable || passes[0].Expected != int64(m.count(string(s.Entity))) || len(passes[0].Doubts) > 0 {
			t.Errorf("%s: passes %+v, want one whole pass announcing %d", s.Name, passes, m.count(string(s.Entity)))
		}
	}
	if m.finish == nil || m.finish.Status != "succeeded" || sum.Status() != "succeeded" || len(sum.Incomplete) > 0 {
		t.Errorf("run finished %+v, summary %s %v", m.finish, sum.Status(), sum.Incomplete)
	}
	if m.clock.Source != syncdata.ClockService {
		t.Errorf("run clock %+v, want the service's", m.clock)
	}
}

// TestListPagedOnceMore: a pass the sink does not take as whole is paged once more; a list that
// stays unsettled is paged twice in all, not more, said incomplete with the sink's doubt, and the
// run is partial.
func TestListPagedOnceMore(t *testing.T) {
	e := newMemEnv(t, 0.02)
	m := newMemSink()
	m.refuse = func(entity string, pass int) bool {
		return entity == "reviews" && pass == 1 || entity == "invoices"
	}
	sum, err := e.sync(m, e.opts())
	if err != nil {
		t.Fatal(err)
	}
	if n := len(m.passes["reviews"]); n != 2 {
		t.Errorf("reviews: %d passes, want 2 (the second whole)", n)
	}
	if n := len(m.passes["invoices"]); n != 2 {
		t.Errorf("invoices: %d passes, want 2 and no more", n)
	}
	if n := len(m.passes["customers"]); n != 1 {
		t.Errorf("customers: %d passes, want 1", n)
	}
	if !slices.Equal(sum.Incomplete, []string{"invoices"}) || sum.Status() != "partial" || m.finish.Status != "partial" {
		t.Errorf("incomplete %v, status %s (finished %s): want invoices alone, partial", sum.Incomplete, sum.Status(), m.finish.Status)
	}
	if st := m.streams["invoices"]; st.Complete || !strings.HasPrefix(st.Error, "not whole: ") {
		t.Errorf("invoices stream %+v: want incomplete with the sink's doubt", st)
	}
	if st := m.streams["reviews"]; !st.Complete || st.Error != "" {
		t.Errorf("reviews stream %+v: want complete", st)
	}
}

// TestEnvelopeDoubtEndsThePasses: a list whose envelope breaks the spec is ended with the doubt,
// located, and not paged again (the envelope would say the same); the run goes on, partial.
func TestEnvelopeDoubtEndsThePasses(t *testing.T) {
	e := newMemEnv(t, 0.02)
	if err := e.sb.SetFaults(sandbox.Faults{PathPrefix: "/hl/v1/customer", HasMoreString: 1}); err != nil {
		t.Fatal(err)
	}
	m := newMemSink()
	o := e.opts()
	o.PageSize = 10
	sum, err := e.sync(m, o)
	if err != nil {
		t.Fatal(err)
	}
	passes := m.passes["customers"]
	want := `GET /hl/v1/customer page 1: hasMore: "false" is a string, not a boolean`
	if len(passes) != 1 || len(passes[0].Doubts) == 0 || !strings.Contains(passes[0].Doubts[0], want) {
		t.Fatalf("customers passes %+v, want one with the doubt %q", passes, want)
	}
	if !slices.Contains(sum.Incomplete, "customers") || sum.Status() != "partial" {
		t.Errorf("incomplete %v, status %s", sum.Incomplete, sum.Status())
	}
	if got := m.count("customers"); got != e.live("customers") {
		t.Errorf("%d customers in the sink, the simulator has %d: the pages are read all the same", got, e.live("customers"))
	}
}

// TestHostilePagingStops: a service that pages without end, repeats itself or loops its cursor is
// stopped by the guards with a located error, in bounded time, and the stream is recorded failed.
func TestHostilePagingStops(t *testing.T) {
	tests := []struct {
		name   string
		faults sandbox.Faults
		stream string
		known  int64 // the last complete read of the stream; 0: none
		credit bool  // one customer's credit history is due
		want   []string
	}{
		{"customers list endless, new records on every page", sandbox.Faults{PathPrefix: "/hl/v1/customer", EndlessList: 1}, "customers", 0, false,
			[]string{"customers: GET /hl/v1/customer page ", "the server announced (pageCount", "; stopped"}},
		{"the same page forever", sandbox.Faults{PathPrefix: "/hl/v1/customer", SamePageForever: 1}, "customers", 0, false,
			[]string{"customers: GET /hl/v1/customer page 2: the same ", " ids as page 1; stopped"}},
		{"pageCount 1000000, later pages empty", sandbox.Faults{PathPrefix: "/hl/v1/invoice", InflatedPageCount: 1}, "invoices", 0, false,
			[]string{"invoices: GET /hl/v1/invoice page "}},
		{"webhook cursor alternates between two values", sandbox.Faults{PathPrefix: "/hl/v2/webhooks", CursorLoop: 1}, "webhook_deliveries", 0, false,
			[]string{"webhook_deliveries: GET /hl/v2/webhooks/new-history page ", "; stopped"}},
		{"nothing announced, hasMore forever", sandbox.Faults{PathPrefix: "/hl/v1/customer", UnannouncedEndless: 1}, "customers", 150, false,
			[]string{"customers: GET /hl/v1/customer page ", "neither pageCount nor a total announced; the last complete read had 150 records"}},
		{"credit history endless", sandbox.Faults{PathPrefix: "/credit/v1/credit/customer/paginate-credit-history/", EndlessCredit: 1}, "", 0, true,
			[]string{"credit history of customer ", "page 1001: past the ceiling of 1000 pages", "pageCount 100000000"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newMemEnv(t, 0.01)
			if err := e.sb.SetFaults(tt.faults); err != nil {
				t.Fatal(err)
			}
			m := newMemSink()
			if tt.known > 0 {
				m.last = map[string]int64{tt.stream: tt.known}
			}
			if tt.credit {
				var c struct{ ID string }
				if err := json.Unmarshal(e.sb.Dump("customers")[0], &c); err != nil {
					t.Fatal(err)
				}
				m.credit = []syncdata.CreditTarget{{CustomerID: c.ID, Reason: syncdata.CreditNever}}
			}
			start := time.Now()
			_, err := e.sync(m, e.opts())
			took := time.Since(start)
			t.Logf("stopped after %s: %v", took.Round(time.Millisecond), err)
			if err == nil {
				t.Fatal("the sync succeeded against a misbehaving service")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error lacks %q:\n%v", w, err)
				}
			}
			if took > 30*time.Second {
				t.Errorf("took %s to stop", took)
			}
			if tt.stream != "" {
				if st := m.streams[tt.stream]; st.Complete || st.Error == "" {
					t.Errorf("%s stream recorded %+v, want failed", tt.stream, st)
				}
			}
			if m.finish != nil {
				t.Errorf("a failed run was finished: %+v", m.finish)
			}
			if len(m.read) > 0 {
				t.Errorf("credit reads recorded for a failed history: %+v", m.read)
			}
		})
	}
}

// noDate drops the Date header of every answer, as a service (or a proxy) without one.
type noDate struct{ h http.Handler }

func (n noDate) ServeHTTP(w http.ResponseWriter, r *http.Request) { n.h.ServeHTTP(dateless{w}, r) }

type dateless struct{ http.ResponseWriter }

func (d dateless) WriteHeader(code int) {
	d.Header()["Date"] = nil // nil, not deleted: net/http adds its own otherwise
	d.ResponseWriter.WriteHeader(code)
}

func (d dateless) Write(b []byte) (int, error) {
	d.Header()["Date"] = nil
	return d.ResponseWriter.Write(b)
}

// TestNoDateHeaderSaysSo: answers without a Date header leave the service's clock unknown. The
// run says so once, takes this machine's clock and records the offset as unknown (stored NULL),
// so the credit targets pace none of its reads by the service's dates (they wait for a signal or
// the bound). On main the offset was recorded as 0, a measured agreement.
func TestNoDateHeaderSaysSo(t *testing.T) {
	e := newMemEnv(t, 0.01)
	e.srv = httptest.NewServer(noDate{e.sb})
	t.Cleanup(e.srv.Close)
	m := newMemSink()
	o := e.opts()
	o.MaxClockSkew = 0
	before := time.Now()
	if _, err := e.sync(m, o); err != nil {
		t.Fatal(err)
	}
	if m.clock.Source != syncdata.ClockMachine || !m.clock.NoDate {
		t.Errorf("the run's clock %+v: want this machine's, the offset unknown", m.clock)
	}
	if got := m.ObservedAt(); got.Before(before) || got.After(time.Now()) {
		t.Errorf("observed at %v, want this machine's clock", got)
	}
	if n := strings.Count(e.logs.String(), "the service's answers carry no Date header"); n != 1 {
		t.Errorf("said %d times, want once:\n%s", n, e.logs.String())
	}
}
