package jobs_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/billsync/billsync/internal/api"
	"github.com/billsync/billsync/internal/jobs"
)

// topupRow is one row of a person's top-up sheet.
type topupRow struct {
	c      simCustomer
	amount int64
	repeat string // the repeat column's cell; the column is written only when a row has one
}

func (e *env) topupCSV(name string, rows []topupRow) string {
	e.t.Helper()
	head := "customerId,productId,amount"
	withRepeat := slices.ContainsFunc(rows, func(r topupRow) bool { return r.repeat != "" })
	if withRepeat {
		head += ",repeat"
	}
	lines := []string{head}
	for _, r := range rows {
		l := fmt.Sprintf("%s,%s,%d", r.c.ID, e.topupProduct().ID, r.amount)
		if withRepeat {
			l += "," + r.repeat
		}
		lines = append(lines, l)
	}
	return e.file(name, lines...)
}

func (e *env) topupProduct() simProduct { return e.product(creditUsage) }

// ledgerTopups is the number of top-up entries the service booked for these customers: what the service
// applied, whatever billsync printed.
func (e *env) ledgerTopups(cs []simCustomer) int {
	p := e.topupProduct()
	n := 0
	for _, c := range cs {
		_, k := e.balance(c.ID, p.ID)
		n += k
	}
	return n
}

// applyThrice applies a plan three times in a row, as a person rerunning apply does, and returns the first run.
func (e *env) applyThrice(id string, mod ...func(*jobs.ApplyOptions)) *jobs.RunResult {
	e.t.Helper()
	first := e.apply(id, mod...)
	for range 2 {
		if r := e.apply(id, mod...); r.Sent != 0 {
			e.t.Errorf("apply of plan %s again sent %d, want nothing", id, r.Sent)
		}
	}
	return first
}

func countStates(p *jobs.Plan, st jobs.State) int {
	n := 0
	for _, a := range p.Actions {
		if a.State == st {
			n++
		}
	}
	return n
}

// TestEditedSheetSendsOnlyWhatWasNotSent is a finance user's month: a five-row top-up is applied; the sheet
// gets a sixth row and is planned again; it is sorted the other way, re-saved as a workbook, one row is marked
// to repeat, then the whole file is sent again as next month's top-up. Each plan is applied three times in a
// row, and the service's own ledger is counted after each step.
func TestEditedSheetSendsOnlyWhatWasNotSent(t *testing.T) {
	e := newEnv(t)
	cs := e.customers(6)
	var rows []topupRow
	for i, c := range cs {
		rows = append(rows, topupRow{c: c, amount: int64(100 * (i + 1))})
	}
	base := e.ledgerTopups(cs)
	step := func(name string, p *jobs.Plan, wantHeld, wantNew int) *jobs.Plan {
		t.Helper()
		if got := countStates(p, jobs.Held); got != wantHeld {
			t.Errorf("%s: plan %s holds %d row(s), want %d; states %v", name, p.ID, got, wantHeld, states(p))
		}
		before := e.ledgerTopups(cs)
		first := e.applyThrice(p.ID)
		if got := e.ledgerTopups(cs) - before; got != wantNew {
			t.Errorf("%s: the service booked %d new top-up(s), want %d", name, got, wantNew)
		}
		if first.Sent != wantNew {
			t.Errorf("%s: apply sent %d, want %d", name, first.Sent, wantNew)
		}
		return p
	}

	// Five rows, applied.
	sheet := e.topupCSV("topup.csv", rows[:5])
	first := step("five rows", e.mustPlan(jobs.CreditTopup, sheet), 0, 5)

	// The same sheet with a sixth row: only the new row goes out.
	sheet = e.topupCSV("topup.csv", rows)
	six := step("sixth row added", e.mustPlan(jobs.CreditTopup, sheet), 5, 1)
	if six.ID == first.ID {
		t.Fatalf("the edited sheet was taken for plan %s", first.ID)
	}
	a := six.Actions[0]
	if a.Detail["repeatOfPlan"] != first.ID || a.Detail["repeatOfLine"] != "2" || a.Detail["repeatOfState"] != "succeeded" ||
		!strings.Contains(a.Detail["repeatOf"], "topup.csv") || !strings.Contains(a.Detail["repeatOf"], "UTC") {
		t.Errorf("a held row shows %v, want the earlier plan, its line, time (with its zone) and outcome", a.Detail)
	}

	// Sorted the other way, under another name: nothing goes out.
	rev := slices.Clone(rows)
	slices.Reverse(rev)
	step("rows sorted the other way", e.mustPlan(jobs.CreditTopup, e.topupCSV("topup-sorted.csv", rev)), 6, 0)

	// Re-saved as a workbook: other order, numbers as numeric cells, an extra column.
	xrows := [][]any{{"Catatan", "amount", "productId", "customerId"}}
	for _, i := range []int{2, 0, 5, 1, 4, 3} {
		xrows = append(xrows, []any{"baris " + fmt.Sprint(i), float64(rows[i].amount), e.topupProduct().ID, rows[i].c.ID})
	}
	step("re-saved workbook", e.mustPlan(jobs.CreditTopup, e.xlsxFile("topup.xlsx", xrows...)), 6, 0)

	// One row marked to repeat: it alone goes out, once.
	marked := slices.Clone(rows)
	marked[2].repeat = "YES"
	mp := step("one row marked repeat", e.mustPlan(jobs.CreditTopup, e.topupCSV("topup.csv", marked)), 5, 1)
	if !mp.Actions[2].AllowRepeat || mp.Actions[2].Detail["repeatOf"] == "" {
		t.Errorf("the marked row: allow %v, detail %v; want it marked with what it repeats", mp.Actions[2].AllowRepeat,
			mp.Actions[2].Detail)
	}
	if _, n := e.balance(cs[2].ID, e.topupProduct().ID); n < 2 {
		t.Errorf("customer 3 has %d top-ups, want the repeat booked", n)
	}

	// Next month's top-up: -again sends every row once more.
	step("whole file with -again", e.mustPlan(jobs.CreditTopup, e.topupCSV("topup.csv", rows),
		func(o *jobs.PlanOptions) { o.Again = true }), 0, 6)

	if got := e.ledgerTopups(cs) - base; got != 5+1+1+6 {
		t.Errorf("the service booked %d top-ups in all, want 13", got)
	}
	// Planning the first file again still finds its plan, fully applied.
	if p := e.mustPlan(jobs.CreditTopup, e.topupCSV("topup.csv", rows[:5])); p.ID != first.ID || !p.Existing {
		t.Errorf("the first file planned again made plan %s (existing %v), want %s", p.ID, p.Existing, first.ID)
	}
}

// TestTwoPlansOfTheSameRowsSendOnce plans the same rows twice (another file order, then -again twice) before
// either is applied: the second plan applied finds the rows sent by the first right before sending, and holds
// them.
func TestTwoPlansOfTheSameRowsSendOnce(t *testing.T) {
	for _, again := range []bool{false, true} {
		t.Run(fmt.Sprintf("again=%v", again), func(t *testing.T) {
			e := newEnv(t)
			cs := e.customers(3)
			rows := []topupRow{{c: cs[0], amount: 400}, {c: cs[1], amount: 500}, {c: cs[2], amount: 600}}
			mod := func(o *jobs.PlanOptions) { o.Again = again }
			base := e.ledgerTopups(cs)
			a := e.mustPlan(jobs.CreditTopup, e.topupCSV("a.csv", rows), mod)
			rev := slices.Clone(rows)
			slices.Reverse(rev)
			b := e.mustPlan(jobs.CreditTopup, e.topupCSV("b.csv", rev), mod)
			if a.ID == b.ID || countStates(a, jobs.Held)+countStates(b, jobs.Held) != 0 {
				t.Fatalf("plans %s and %s: held %d and %d, want two plans and nothing held before any send", a.ID, b.ID,
					countStates(a, jobs.Held), countStates(b, jobs.Held))
			}
			if r := e.applyThrice(a.ID); r.Sent != 3 {
				t.Errorf("plan A sent %d, want 3", r.Sent)
			}
			rb := e.applyThrice(b.ID)
			if rb.Sent != 0 || rb.Run.Held != 3 || rb.Held != 3 || rb.Status != jobs.RunCompleted {
				t.Errorf("plan B: sent %d, this run held %d, plan holds %d, status %s; want 0, 3, 3, completed", rb.Sent,
					rb.Run.Held, rb.Held, rb.Status)
			}
			if got := e.ledgerTopups(cs) - base; got != 3 {
				t.Errorf("the service booked %d top-ups, want 3", got)
			}
			for _, x := range rb.Plan.Actions {
				if x.Detail["repeatOfPlan"] != a.ID {
					t.Errorf("plan B row %d held as a repeat of %q, want plan %s", x.Seq, x.Detail["repeatOfPlan"], a.ID)
				}
			}
			var buf bytes.Buffer
			jobs.PrintResult(&buf, rb, jobs.FileOptions{})
			if !strings.Contains(buf.String(), "HELD") || !strings.Contains(buf.String(), "repeats plan "+a.ID) {
				t.Errorf("the run's output does not show the held rows:\n%s", buf.String())
			}
		})
	}
}

// TestApplyMaxCountsWhatItDid applies a five-row plan two rows at a time: each run says what it did and what is
// left, and the journal's runs, the plan list and the plan agree.
func TestApplyMaxCountsWhatItDid(t *testing.T) {
	e := newEnv(t)
	cs := e.customers(5)
	var rows []topupRow
	for i, c := range cs {
		rows = append(rows, topupRow{c: c, amount: int64(50 * (i + 1))})
	}
	base := e.ledgerTopups(cs)
	p := e.mustPlan(jobs.CreditTopup, e.topupCSV("topup.csv", rows))
	max2 := func(o *jobs.ApplyOptions) { o.Max = 2 }
	want := []struct{ run, planned, succeeded int }{{2, 3, 2}, {2, 1, 4}, {1, 0, 5}}
	for i, w := range want {
		r := e.apply(p.ID, max2)
		if r.Sent != w.run || r.Run.Succeeded != w.run || r.Run.Failed+r.Run.Unresolved+r.Run.Held != 0 ||
			r.Planned != w.planned || r.Succeeded != w.succeeded || r.Unresolved != 0 {
			t.Errorf("run %d: sent %d, this run %+v, plan %+v; want %d sent and succeeded, %d planned, %d succeeded",
				i+1, r.Sent, r.Run, r.Counts, w.run, w.planned, w.succeeded)
		}
		var buf bytes.Buffer
		jobs.PrintResult(&buf, r, jobs.FileOptions{})
		out := buf.String()
		if i == 0 && !strings.Contains(out, "2 succeeded, 0 failed, 3 still planned (not sent: reached -max 2)") ||
			strings.Contains(out, "unresolved") {
			t.Errorf("run %d output:\n%s", i+1, out)
		}
		if got := e.ledgerTopups(cs) - base; got != w.succeeded {
			t.Errorf("run %d: the service booked %d top-ups, want %d", i+1, got, w.succeeded)
		}
		j := e.open()
		var sent, succeeded, failed, unresolved, held int
		if err := j.DB().QueryRow(`SELECT sent, succeeded, failed, unresolved, held FROM job_runs WHERE id = ?`,
			r.RunID).Scan(&sent, &succeeded, &failed, &unresolved, &held); err != nil {
			t.Fatal(err)
		}
		if sent != w.run || succeeded != w.run || failed+unresolved+held != 0 {
			t.Errorf("job_runs %d: sent %d succeeded %d failed %d unresolved %d held %d; want this run's %d", r.RunID, sent,
				succeeded, failed, unresolved, held, w.run)
		}
		ps, err := j.Plans(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if len(ps) != 1 || ps[0].Counts != r.Counts {
			t.Errorf("job list says %+v, the run %+v", ps, r.Counts)
		}
		var inView int
		if err := j.DB().QueryRow(`SELECT count(*) FROM job_action_state WHERE plan_id = ? AND state = 'planned'`,
			p.ID).Scan(&inView); err != nil {
			t.Fatal(err)
		}
		if inView != w.planned {
			t.Errorf("job_action_state has %d planned, want %d", inView, w.planned)
		}
		j.Close()
	}
}

// TestRepeatedRowsOfEveryKindAreHeld applies each kind's file, then plans its rows again in the other order
// under another name: every row of a kind that changes something is held and nothing reaches the service; a
// coupon check, which changes nothing, is asked again.
func TestRepeatedRowsOfEveryKindAreHeld(t *testing.T) {
	for _, wc := range writeCases() {
		t.Run(string(wc.kind), func(t *testing.T) {
			e := newEnv(t)
			p, verify := wc.plan(e)
			e.applyThrice(p.ID)
			posts := e.posts(wc.path)
			b, err := os.ReadFile(p.Input)
			if err != nil {
				t.Fatal(err)
			}
			lines := strings.Split(strings.TrimSpace(string(b)), "\n")
			data := slices.Clone(lines[1:])
			slices.Reverse(data)
			again := e.mustPlan(wc.kind, e.file("again-"+filepath.Base(p.Input), append(lines[:1:1], data...)...))
			readOnly := wc.kind == jobs.CouponCheck
			wantHeld := len(again.Actions)
			if readOnly {
				wantHeld = 0
			}
			if got := countStates(again, jobs.Held); got != wantHeld {
				t.Errorf("plan of the same rows reordered holds %d, want %d: %v", got, wantHeld, states(again))
			}
			e.applyThrice(again.ID)
			wantPosts := posts
			if readOnly {
				wantPosts += len(again.Actions)
			}
			if got := e.posts(wc.path); got != wantPosts {
				t.Errorf("%d requests to %s after the reordered plan, want %d", got, wc.path, wantPosts)
			}
			verify(e)
		})
	}
}

// TestRepeatWindow: a send older than the window is not a repeat; a wider window catches it.
func TestRepeatWindow(t *testing.T) {
	e := newEnv(t)
	cs := e.customers(2)
	rows := []topupRow{{c: cs[0], amount: 700}, {c: cs[1], amount: 800}}
	e.applyThrice(e.mustPlan(jobs.CreditTopup, e.topupCSV("october.csv", rows)).ID)
	later := func(o *jobs.PlanOptions) { o.Now = e.sb.Now().Add(36 * 24 * time.Hour) } // billsync's clock in these tests is the simulator's
	if p := e.mustPlan(jobs.CreditTopup, e.topupCSV("november.csv", rows[1:]), later); countStates(p, jobs.Held) != 0 {
		t.Errorf("36 days later with the default window: %v, want nothing held", states(p))
	}
	wide := func(o *jobs.PlanOptions) { o.RepeatWindow = 40 * 24 * time.Hour }
	both := []topupRow{rows[1], rows[0]} // not the October file itself, which is its own plan
	if p := e.mustPlan(jobs.CreditTopup, e.topupCSV("november.csv", both), later, wide); countStates(p, jobs.Held) != 2 {
		t.Errorf("36 days later with a 40-day window: %v, want both held", states(p))
	}
}

// TestRepeatColumnValues: yes in any case marks a row; blank does not; anything else is a located error.
func TestRepeatColumnValues(t *testing.T) {
	e := newEnv(t)
	cs := e.customers(3)
	in := e.topupCSV("topup.csv", []topupRow{{c: cs[0], amount: 1, repeat: "Yes"}, {c: cs[1], amount: 2, repeat: "ya"},
		{c: cs[2], amount: 3, repeat: " "}})
	_, err := e.plan(jobs.CreditTopup, in)
	ie := inputErrors(t, err)
	if len(ie) != 1 || ie[0].Line != 3 || !strings.Contains(ie[0].Column, "repeat") || !strings.Contains(ie[0].Msg, `"ya"`) {
		t.Fatalf("errors: %v", ie)
	}
	in = e.topupCSV("topup.csv", []topupRow{{c: cs[0], amount: 1, repeat: "yES"}, {c: cs[1], amount: 2}})
	p := e.mustPlan(jobs.CreditTopup, in)
	if !p.Actions[0].AllowRepeat || p.Actions[1].AllowRepeat {
		t.Errorf("allow repeat: %v %v", p.Actions[0].AllowRepeat, p.Actions[1].AllowRepeat)
	}
	table := jobs.PlanTable(p, jobs.FileOptions{})
	col := slices.IndexFunc(table.Columns, func(c jobs.Column) bool { return c.Key == "repeat" })
	if col < 0 || table.Columns[col].Title != "repeat" || table.Rows[0][col] != "yes" || table.Rows[1][col] != "" {
		t.Errorf("plan file: %v / %v", table.Columns, table.Rows)
	}
}

// TestSkippedRowsAreCounted: email-fix rows with a blank toEmail are stored as skipped lines and counted.
func TestSkippedRowsAreCounted(t *testing.T) {
	e := newEnv(t)
	cs := e.customers(3)
	in := e.file("emails.csv", "fromEmail,toEmail", cs[0].Email+",", cs[1].Email+",new.one@fixed.example", cs[2].Email+",")
	p := e.mustPlan(jobs.EmailFix, in)
	j := e.open()
	defer j.Close()
	got, err := j.LoadPlan(context.Background(), p.ID)
	if err != nil {
		t.Fatal(err)
	}
	if c := got.Counts(); c.Skipped != 2 || c.Planned != 1 || !slices.Equal(got.SkippedLines, []int{2, 4}) {
		t.Errorf("stored plan: counts %+v, skipped lines %v", c, got.SkippedLines)
	}
	ps, err := j.Plans(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if ps[0].Skipped != 2 || ps[0].Planned != 1 {
		t.Errorf("plan list: %+v", ps[0])
	}
}

// TestHeldOnlyForTheSameChange: what a kind compares is what it changes. Another amount for the same customer
// is a new top-up; an invoice with the same customer, text and amount is the same invoice whatever its expiry
// or phone, and another amount makes it a new one.
func TestHeldOnlyForTheSameChange(t *testing.T) {
	e := newEnv(t)
	cs := e.customers(1)
	e.applyThrice(e.mustPlan(jobs.CreditTopup, e.topupCSV("first.csv", []topupRow{{c: cs[0], amount: 700}})).ID)
	if p := e.mustPlan(jobs.CreditTopup, e.topupCSV("other.csv", []topupRow{{c: cs[0], amount: 701}})); countStates(p, jobs.Held) != 0 {
		t.Errorf("another amount for the same customer: %v, want it planned", states(p))
	}

	head := "name,email,mobile,redirectUrl,description,expiredAt,quantity,rate"
	e.applyThrice(e.mustPlan(jobs.InvoiceCreate, e.file("inv.csv", head,
		"Budi Hartono,budi.h@example.com,0812000111,https://shop.example/thanks,Langganan Maret,2026-12-31,2,150000")).ID)
	same := e.mustPlan(jobs.InvoiceCreate, e.file("inv2.csv", head,
		"Budi Hartono,BUDI.H@example.com,0899999999,https://shop.example/other,Langganan Maret,2027-01-15,1,300000",
		"Budi Hartono,budi.h@example.com,0812000111,https://shop.example/thanks,Langganan Maret,2026-12-31,2,175000"))
	if got := states(same); got[2] != jobs.Held || got[3] != jobs.Planned {
		t.Errorf("invoice rows: %v; want line 2 (same customer, text and total, other expiry and phone) held, line 3 (another total) planned", got)
	}
}

// TestMarkedRowHeldByLaterDashboardTopup: a sheet planned with -again repeats what the service showed when it
// was planned (a top-up made in the dashboard that morning goes out again, as the person chose), but a top-up
// made in the dashboard after the plan, of the same customer and amount, holds that row right before it is
// sent, naming the entry: the person never saw it.
func TestMarkedRowHeldByLaterDashboardTopup(t *testing.T) {
	e := newEnv(t)
	cs := e.customers(2)
	p := e.topupProduct()
	dashboard := func(c simCustomer) {
		t.Helper()
		if _, err := e.client(testKey).AddCredit(context.Background(), api.AddCreditRequest{CustomerID: c.ID, ProductID: p.ID,
			Amount: 800}); err != nil {
			t.Fatal(err)
		}
	}
	dashboard(cs[0])
	plan := e.mustPlan(jobs.CreditTopup, e.topupCSV("topup.csv", []topupRow{{c: cs[0], amount: 800}, {c: cs[1], amount: 800}}),
		func(o *jobs.PlanOptions) { o.Again = true })
	e.sb.Advance(10 * time.Minute)
	dashboard(cs[1])
	res := e.apply(plan.ID)
	r1, r2 := res.Plan.Actions[0], res.Plan.Actions[1]
	if _, n := e.balance(cs[0].ID, p.ID); r1.State != jobs.Succeeded || n != 2 {
		t.Errorf("row 1, marked to repeat the dashboard's top-up made before planning: %s, %d top-ups; want sent", r1.State, n)
	}
	_, n := e.balance(cs[1].ID, p.ID)
	if r2.State != jobs.Held || n != 1 || !strings.Contains(r2.Detail["repeatOf"], "credit entry ") ||
		!strings.Contains(r2.Detail["repeatOf"], " of 800 ") || !strings.Contains(r2.Detail["held"], "-again") {
		t.Errorf("row 2, a dashboard top-up after planning: %s, %d top-ups, %v; want held naming the entry", r2.State, n, r2.Detail)
	}
}
