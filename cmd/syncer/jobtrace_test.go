package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/billsync/billsync/internal/jobs"
	"github.com/billsync/billsync/internal/sandbox"
	"github.com/sethvargo/go-envconfig"
)

// traceWorld is a simulator over HTTP, a warehouse and a journal in a temporary folder, and the commands a
// finance user runs against them.
type traceWorld struct {
	t    *testing.T
	sb   *sandbox.Server
	url  string
	dir  string
	vars map[string]string
	prod string
	cust []string
}

// newTraceWorld starts the simulator with its clock `behind` billsync's (the machine's); nothing is synced yet.
func newTraceWorld(t *testing.T, behind time.Duration) *traceWorld {
	t.Helper()
	sb, err := sandbox.New(sandbox.Options{Seed: 5, Scale: 0.02, Key: secret, Now: time.Now().UTC().Add(-behind).Truncate(time.Second)})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(sb)
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	w := &traceWorld{t: t, sb: sb, url: srv.URL, dir: dir, vars: map[string]string{"BILLSYNC_BASE_URL": srv.URL,
		"BILLSYNC_API_KEY": secret, "BILLSYNC_DB": filepath.Join(dir, "billsync.duckdb"), "BILLSYNC_RATE_PER_MIN": "0",
		"BILLSYNC_ACCOUNT": "main", "BILLSYNC_TZ": "Asia/Jakarta", "BILLSYNC_ALLOW_SELF_APPROVE": "true"}}
	w.prod = creditProduct(t, sb)
	for _, raw := range sb.Dump("customers")[:6] {
		var c struct{ ID string }
		json.Unmarshal(raw, &c)
		w.cust = append(w.cust, c.ID)
	}
	return w
}

func (w *traceWorld) sync() {
	w.t.Helper()
	var logs bytes.Buffer
	if err := run(context.Background(), []string{"-once"}, envconfig.MapLookuper(w.vars), &logs, &logs); err != nil {
		w.t.Fatalf("sync: %v\n%s", err, logs.String())
	}
}

// sheet writes a top-up file: one row per customer and amount.
func (w *traceWorld) sheet(name string, rows ...string) string {
	lines := []string{"customerId,productId,amount"}
	for i := 0; i < len(rows); i += 2 {
		lines = append(lines, rows[i]+","+w.prod+","+rows[i+1])
	}
	p := filepath.Join(w.dir, name)
	if err := os.WriteFile(p, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		w.t.Fatal(err)
	}
	return p
}

// adds counts the add-credit requests the simulator answered: what billsync sent.
func (w *traceWorld) adds() int {
	n := 0
	for _, r := range w.sb.Requests() {
		if strings.HasSuffix(r.Path, "/add-credit") {
			n++
		}
	}
	return n
}

// entries are the simulator's credit entries of a customer and amount: the ground truth a held row must name.
func (w *traceWorld) entries(cust string, amount float64) []string {
	var ids []string
	for _, raw := range w.sb.Dump("credit_ledger") {
		var e struct {
			ID, CustomerID, ProductID string
			Credit                    float64
		}
		json.Unmarshal(raw, &e)
		if e.CustomerID == cust && e.ProductID == w.prod && e.Credit == amount {
			ids = append(ids, e.ID)
		}
	}
	return ids
}

// loseJournal deletes the job journal, as a new machine or a restore from before the top-up would.
func (w *traceWorld) loseJournal() {
	j := jobs.DefaultJournalPath(w.vars["BILLSYNC_DB"])
	for _, p := range []string{j, j + ".wal"} {
		if err := os.Remove(p); err != nil && !os.IsNotExist(err) {
			w.t.Fatal(err)
		}
	}
}

// dashboardTopup adds credit straight on the service, as a person in its dashboard does: billsync's journal
// never hears of it.
func (w *traceWorld) dashboardTopup(cust string, amount int) {
	body := fmt.Sprintf(`{"customerId":%q,"productId":%q,"amount":%d}`, cust, w.prod, amount)
	req, _ := http.NewRequest(http.MethodPost, w.url+"/credit/v1/credit/customer/add-credit", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+secret)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != http.StatusOK {
		w.t.Fatalf("dashboard top-up: %v %v", err, resp)
	}
	resp.Body.Close()
}

var planIDRe = regexp.MustCompile(`(?m)^plan ([0-9a-f]{12}):`)

func (w *traceWorld) plan(file string, extra ...string) (id, out string) {
	w.t.Helper()
	return w.planKind("credit-topup", file, extra...)
}

func (w *traceWorld) planKind(kind, file string, extra ...string) (id, out string) {
	w.t.Helper()
	out, errs, code := syncer(w.t, w.vars, append([]string{"job", "plan", "-kind", kind, "-in", file}, extra...)...)
	m := planIDRe.FindStringSubmatch(out)
	if code != 0 || m == nil {
		w.t.Fatalf("plan %s: exit %d\n%s%s", file, code, out, errs)
	}
	return m[1], out
}

func (w *traceWorld) apply(id string) string {
	w.t.Helper()
	out, errs, code := syncer(w.t, w.vars, "job", "apply", id)
	if code != 0 {
		w.t.Fatalf("apply %s: exit %d\n%s%s", id, code, out, errs)
	}
	return out
}

// TestTopupRepeatSeenOnService is issue 35's lost journal, as the finance team lives it: a top-up is planned,
// approved and applied, and a sync brings it into the warehouse; then the journal is lost (deleted, a restore
// from before the top-up, a new machine). Planned again, both rows are held, each naming its credit entry (id,
// amount, time) as synced, and apply sends nothing. A top-up whose journal is lost before any sync is not in
// the warehouse yet: the plan cannot hold it, but apply reads the customer's credit history right before
// sending and holds it. A different amount for the same customer is not a repeat; -again sends the file once more.
func TestTopupRepeatSeenOnService(t *testing.T) {
	w := newTraceWorld(t, 2*time.Minute)
	w.sync()
	sheet := w.sheet("topup.csv", w.cust[0], "1000", w.cust[1], "1000")
	id, _ := w.plan(sheet)
	if out, errs, code := syncer(t, w.vars, "job", "approve", id); code != 0 {
		t.Fatalf("approve: exit %d\n%s%s", code, out, errs)
	}
	w.apply(id)
	e0, e1 := w.entries(w.cust[0], 1000), w.entries(w.cust[1], 1000)
	if w.adds() != 2 || len(e0) != 1 || len(e1) != 1 {
		t.Fatalf("the first apply sent %d top-ups, entries %v and %v; want 2, one each", w.adds(), e0, e1)
	}
	w.sync()

	// The journal is lost after the sync: the warehouse shows the top-ups, and planning holds them.
	w.loseJournal()
	id, out := w.plan(sheet)
	t.Logf("plan, journal lost, after a sync:\n%s", out)
	entry := regexp.MustCompile(`credit entry (\S+) of 1000 \(MERCHANT_TOPUP\) at \d{4}-\d\d-\d\d \d\d:\d\d WIB \(in the warehouse, synced `)
	named := map[string]bool{}
	for _, m := range entry.FindAllStringSubmatch(out, -1) {
		named[m[1]] = true
	}
	if !strings.Contains(out, "2 held") || !named[e0[0]] || !named[e1[0]] || !strings.Contains(out, "nothing to send") ||
		!strings.Contains(out, "-again") {
		t.Errorf("the plan does not hold both rows naming entries %s and %s (id, amount, time in WIB, where) and how to "+
			"send anyway:\n%s", e0[0], e1[0], out)
	}
	if out = w.apply(id); w.adds() != 2 || !strings.Contains(out, "nothing to") {
		t.Errorf("apply of the held plan: %d add-credit requests in all, want 2\n%s", w.adds(), out)
	}
	show, _, _ := syncer(t, w.vars, "job", "show", id)
	if !strings.Contains(show, "held") || !strings.Contains(show, e0[0]) {
		t.Errorf("job show does not say the row is held by entry %s:\n%s", e0[0], show)
	}

	// Lost before a sync: only a read of the service can tell, right before sending.
	later := w.sheet("later.csv", w.cust[2], "1000", w.cust[3], "1000")
	w.apply(func() string { id, _ := w.plan(later); return id }())
	e2, e3 := w.entries(w.cust[2], 1000), w.entries(w.cust[3], 1000)
	if w.adds() != 4 || len(e2) != 1 || len(e3) != 1 {
		t.Fatalf("the second top-up sent %d in all, entries %v and %v; want 4, one each", w.adds(), e2, e3)
	}
	w.loseJournal()
	id, out = w.plan(later)
	if !strings.Contains(out, "dry run: nothing was sent") {
		t.Errorf("planned before a sync, the warehouse cannot show the top-ups, so nothing is held yet:\n%s", out)
	}
	out = w.apply(id)
	t.Logf("apply, journal lost, before a sync:\n%s", out)
	if w.adds() != 4 {
		t.Errorf("apply after the journal was lost sent the top-ups again: %d add-credit requests in all, want 4\n%s", w.adds(), out)
	}
	for _, e := range []string{e2[0], e3[0]} {
		if !strings.Contains(out, "credit entry "+e+" of 1000") || !strings.Contains(out, "in the service's credit history, read ") {
			t.Errorf("apply does not name credit entry %s read from the service:\n%s", e, out)
		}
	}

	// Another amount for the same customer is another top-up.
	id, out = w.plan(w.sheet("more.csv", w.cust[0], "1500"))
	if strings.Contains(out, "HELD") {
		t.Errorf("a top-up of another amount is held:\n%s", out)
	}
	w.apply(id)
	if w.adds() != 5 {
		t.Errorf("the top-up of 1500 was not sent: %d add-credit requests in all, want 5", w.adds())
	}

	// Next month's top-up of the same file, with -again: sent once, whatever the service shows.
	id, out = w.plan(sheet, "-again")
	if strings.Contains(out, "HELD") || !strings.Contains(out, "marked to repeat credit entry "+e0[0]) {
		t.Errorf("a plan with -again is held, or does not say what it repeats:\n%s", out)
	}
	w.apply(id)
	if w.adds() != 7 {
		t.Errorf("the top-ups planned with -again were not sent: %d add-credit requests in all, want 7", w.adds())
	}
}

// TestDashboardTopupHoldsPlan: a top-up made by hand in the service's dashboard (billsync's journal never
// heard of it) and synced holds a planned top-up of the same customer, product and amount, naming the entry;
// the same top-up older than the repeat window does not, nor does a different amount.
func TestDashboardTopupHoldsPlan(t *testing.T) {
	// The simulator's clock three days back: its top-up is three days old when billsync first syncs (and reads
	// every customer's credit history).
	w := newTraceWorld(t, 72*time.Hour)
	w.dashboardTopup(w.cust[2], 2500)
	w.sb.Advance(72*time.Hour - 2*time.Minute) // within two minutes of billsync's clock again
	w.sync()
	e := w.entries(w.cust[2], 2500)
	if len(e) != 1 {
		t.Fatalf("the dashboard's top-up is %v in the simulator, want one entry", e)
	}
	sheet := w.sheet("topup.csv", w.cust[2], "2500", w.cust[3], "2500")

	// Outside a two-day window: a top-up three days ago is no repeat.
	_, out := w.plan(sheet, "-repeat-window", "48h")
	if strings.Contains(out, "HELD") {
		t.Errorf("a top-up older than the window holds the plan:\n%s", out)
	}

	// Within the default window: held, the entry named; the other customer goes out.
	w.loseJournal() // the plan above was never applied; a fresh journal keeps the test to the service's records
	id, out := w.plan(sheet)
	t.Logf("plan after a dashboard top-up:\n%s", out)
	if !strings.Contains(out, "1 still planned, 1 held") ||
		!regexp.MustCompile(`credit entry `+e[0]+` of 2500 \(MERCHANT_TOPUP\) at \d{4}-\d\d-\d\d \d\d:\d\d WIB`).MatchString(out) {
		t.Errorf("the plan does not hold the row the dashboard's top-up repeats, naming entry %s:\n%s", e[0], out)
	}
	w.apply(id)
	if w.adds() != 2 { // the dashboard's and the other customer's
		t.Errorf("%d add-credit requests in all, want 2 (the dashboard's and the other customer's)", w.adds())
	}
	if got := len(w.entries(w.cust[2], 2500)); got != 1 {
		t.Errorf("customer %s has %d top-ups of 2500, want the dashboard's one", w.cust[2], got)
	}

	// A different amount is another top-up.
	id, out = w.plan(w.sheet("other.csv", w.cust[2], "2600"))
	if strings.Contains(out, "HELD") {
		t.Errorf("a different amount is held:\n%s", out)
	}
	w.apply(id)
	if w.adds() != 3 {
		t.Errorf("the top-up of 2600 was not sent: %d add-credit requests in all, want 3", w.adds())
	}

	// The journal lost again, the sheet planned and applied with a two-day window: the dashboard's top-up of
	// three days ago holds nothing, at planning or before sending; the other customer's, sent today, does.
	w.loseJournal()
	id, out = w.plan(sheet, "-repeat-window", "48h")
	if strings.Contains(out, "HELD") {
		t.Errorf("planned before a sync, nothing can hold the sheet yet:\n%s", out)
	}
	out, errs, code := syncer(t, w.vars, "job", "apply", id, "-repeat-window", "48h")
	if code != 0 || w.adds() != 4 || !strings.Contains(out, "1 held") || strings.Contains(out, "credit entry "+e[0]) {
		t.Errorf("apply with a two-day window: exit %d, %d add-credit requests in all, want 4, the other customer's row "+
			"held and not the dashboard's entry\n%s%s", code, w.adds(), out, errs)
	}
}

// TestOwnEntryDoesNotHoldItsRow: a top-up's answer is lost after the service applied it and the history writes
// its times without a zone, so the reconciliation cannot place the entry against the send: unresolved. After a
// sync the warehouse shows that entry; the person checks, says it is a dashboard top-up and forces not-applied.
// The next apply sends the row: the entry may be the row's own effect, which the person settled, so it does
// not hold the row (held would be for good). The sheet with a row added and planned again: that row is held
// once, naming the plan that sent it and both entries.
func TestOwnEntryDoesNotHoldItsRow(t *testing.T) {
	sb, err := sandbox.New(sandbox.Options{Seed: 5, Scale: 0.02, Key: secret, CreditTimes: sandbox.CreditTimeNoZone,
		Now: time.Now().UTC().Add(-2 * time.Minute).Truncate(time.Second)})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(sb)
	t.Cleanup(srv.Close)
	w := &traceWorld{t: t, sb: sb, url: srv.URL, dir: t.TempDir()}
	w.vars = map[string]string{"BILLSYNC_BASE_URL": srv.URL, "BILLSYNC_API_KEY": secret,
		"BILLSYNC_DB": filepath.Join(w.dir, "billsync.duckdb"), "BILLSYNC_RATE_PER_MIN": "0", "BILLSYNC_ACCOUNT": "main",
		"BILLSYNC_TZ": "Asia/Jakarta", "BILLSYNC_JOB_SETTLE": "1s"}
	w.prod = creditProduct(t, sb)
	var c, other struct{ ID string }
	json.Unmarshal(sb.Dump("customers")[0], &c)
	json.Unmarshal(sb.Dump("customers")[1], &other)
	w.sync()

	sheet := w.sheet("topup.csv", c.ID, "3000")
	id, _ := w.plan(sheet)
	if err := sb.FailNext(sandbox.FaultApplyThen500, 1, "/credit/v1/credit/customer/add-credit"); err != nil {
		t.Fatal(err)
	}
	out, errs, code := syncer(t, w.vars, "job", "apply", id)
	first := w.entries(c.ID, 3000)
	if code != 1 || !strings.Contains(out, "UNRESOLVED") || len(first) != 1 {
		t.Fatalf("apply with the answer lost: exit %d, entries %v; want unresolved, one entry\n%s%s", code, first, out, errs)
	}
	w.sync()
	time.Sleep(1100 * time.Millisecond) // the settle interval
	if out, errs, code = syncer(t, w.vars, "job", "resolve", id, "1", "not-applied", "-why", "entry "+first[0]+
		" is Budi's dashboard top-up", "-force"); code != 0 {
		t.Fatalf("resolve -force: exit %d\n%s%s", code, out, errs)
	}
	out = w.apply(id)
	t.Logf("apply after the forced resolution:\n%s", out)
	if w.adds() != 2 || strings.Contains(out, "HELD") || !strings.Contains(out, "1 succeeded") {
		t.Errorf("the row a person resolved as not applied is held by its own entry, or not sent: %d add-credit requests\n%s",
			w.adds(), out)
	}

	w.sync()
	_, out = w.plan(w.sheet("edited.csv", c.ID, "3000", other.ID, "3000"))
	t.Logf("the sheet with a row added, planned again:\n%s", out)
	all := w.entries(c.ID, 3000)
	if len(all) != 2 || !strings.Contains(out, "1 still planned, 1 held") || !strings.Contains(out, "repeats plan "+id+" row 1") ||
		!strings.Contains(out, "credit entry "+all[0]) || !strings.Contains(out, "credit entry "+all[1]) {
		t.Errorf("the file planned again is not held once, naming the plan and entries %v:\n%s", all, out)
	}
}

// TestOtherKindsSeenOnService: the kinds whose change a synced record shows are held by it too when the
// journal is lost. An invoice created, synced, the journal lost: the same invoice planned again is held,
// naming the invoice. A payment request edited, synced, the journal lost: the same edit is held, naming the
// change the sync saw. An e-mail fixed, synced, changed back by hand in the dashboard, synced, the journal
// lost: the old sheet planned again is held, naming the change the sync saw.
func TestOtherKindsSeenOnService(t *testing.T) {
	w := newTraceWorld(t, 2*time.Minute)
	w.sync()
	write := func(name string, lines ...string) string {
		p := filepath.Join(w.dir, name)
		if err := os.WriteFile(p, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	posts := func(suffix string) int {
		n := 0
		for _, r := range w.sb.Requests() {
			if strings.HasSuffix(r.Path, suffix) {
				n++
			}
		}
		return n
	}

	var c struct{ ID, Email string } // a customer the warehouse knows, with a plain address
	for _, raw := range w.sb.Dump("customers") {
		json.Unmarshal(raw, &c)
		if strings.Contains(c.Email, "@") && !strings.ContainsAny(c.Email, " ,\"") {
			break
		}
	}

	expires := time.Now().AddDate(0, 2, 0).Format("2006-01-02")
	invoices := write("invoices.csv", "name,email,mobile,redirectUrl,description,expiredAt,rate",
		"Sari Wulandari,sari.w@contoh.co.id,08123456789,https://contoh.co.id/terima-kasih,Langganan November,"+expires+",150000")
	id, _ := w.planKind("invoice-create", invoices)
	w.apply(id)
	if posts("/invoice/create") != 1 {
		t.Fatalf("the invoice was not created: %d requests", posts("/invoice/create"))
	}
	var made string
	for _, raw := range w.sb.Dump("invoices") {
		var inv struct {
			ID, Description string
		}
		json.Unmarshal(raw, &inv)
		if inv.Description == "Langganan November" {
			made = inv.ID
		}
	}

	const fixed = "alamat.baru@contoh.co.id"
	fix := write("fix.csv", "fromEmail,toEmail", c.Email+","+fixed)
	id, _ = w.planKind("email-fix", fix)
	w.apply(id)

	var pr struct{ ID, Status, Name string } // an unpaid payment request the warehouse knows
	for _, raw := range w.sb.Dump("payment_requests") {
		json.Unmarshal(raw, &pr)
		if pr.Status != "paid" && pr.Status != "closed" {
			break
		}
	}
	edit := write("edit.csv", "id,name,email,mobile,amount,redirectUrl,description,expiredAt",
		pr.ID+",Paket Tahunan,sari.w@contoh.co.id,08123456789,275000,https://contoh.co.id/terima-kasih,Paket tahunan,"+expires)
	id, _ = w.planKind("payment-edit", edit)
	w.apply(id)
	w.sync()
	// In the dashboard, someone puts the old address back.
	body := fmt.Sprintf(`{"fromEmail":%q,"toEmail":%q}`, fixed, c.Email)
	req, _ := http.NewRequest(http.MethodPost, w.url+"/hl/v1/customer/update", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+secret)
	req.Header.Set("Content-Type", "application/json")
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("the dashboard's change: %v %v", err, resp)
	} else {
		resp.Body.Close()
	}
	w.sync()
	w.loseJournal()

	_, out := w.planKind("invoice-create", invoices)
	t.Logf("the invoice planned again, journal lost:\n%s", out)
	if made == "" || !strings.Contains(out, "1 held") || !strings.Contains(out, "invoice "+made+" to sari.w@contoh.co.id of 150000") {
		t.Errorf("the invoice planned again is not held naming invoice %q:\n%s", made, out)
	}
	_, out = w.planKind("payment-edit", edit)
	t.Logf("the payment edit planned again, journal lost:\n%s", out)
	if !strings.Contains(out, "1 held") || !strings.Contains(out, "payment request "+pr.ID+"'s amount set to \"275000\", seen by a sync") {
		t.Errorf("the payment edit planned again is not held naming the change of %s:\n%s", pr.ID, out)
	}
	_, out = w.planKind("email-fix", fix)
	t.Logf("the e-mail fix planned again, journal lost:\n%s", out)
	if !strings.Contains(out, "1 held") || !strings.Contains(out, "customer "+c.ID+"'s e-mail changed from "+c.Email+" to "+fixed+
		", seen by a sync at ") {
		t.Errorf("the e-mail fix planned again is not held naming the change of customer %s:\n%s", c.ID, out)
	}
}
