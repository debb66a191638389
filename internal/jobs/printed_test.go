package jobs_test

import (
	"context"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/billsync/billsync/internal/api"
	"github.com/billsync/billsync/internal/jobs"
	"github.com/billsync/billsync/internal/sandbox"
	"github.com/billsync/billsync/internal/sheetfmt"
	"github.com/billsync/billsync/internal/sheetfmt/sheetpdf"
	"github.com/xuri/excelize/v2"
)

// heldTopUp is what a finance team does in a week: a three-row top-up applied, then the sheet with a
// fourth row (and five more customers) planned again, its first three rows held as repeats. It returns the
// second plan, the first plan's applied result and its run.
func heldTopUp(t *testing.T, e *env) (held *jobs.Plan, applied *jobs.Plan, run *jobs.Run) {
	t.Helper()
	cs := e.customers(8)
	p := e.product(creditUsage)
	lines := []string{"customerId,productId,amount"}
	for _, c := range cs[:3] {
		lines = append(lines, fmt.Sprintf("%s,%s,150000", c.ID, p.ID))
	}
	first := e.mustPlan(jobs.CreditTopup, e.file("topup.csv", lines...))
	res := e.apply(first.ID)
	if res.Succeeded != 3 {
		t.Fatalf("first top-up: %+v", res)
	}
	for _, c := range cs[3:] {
		lines = append(lines, fmt.Sprintf("%s,%s,150000", c.ID, p.ID))
	}
	held = e.mustPlan(jobs.CreditTopup, e.file("topup-week2.csv", lines...))
	if n := held.Counts().Held; n != 3 {
		t.Fatalf("second plan holds %d rows, want 3", n)
	}
	j := e.open()
	defer j.Close()
	runs, err := j.Runs(context.Background(), first.ID)
	if err != nil || len(runs) != 1 {
		t.Fatalf("runs of %s: %v %v", first.ID, runs, err)
	}
	return held, res.Plan, &runs[0]
}

// TestJobFilesReadInTheirLanguage reads an Indonesian plan file with held rows back as its reader does:
// every cell billsync words is Indonesian (no English of the file's own words), no column repeats another,
// a held row's balance is the one the service answered the earlier send with (not the sync's, from before
// that send) and it says when that send happened as the journal knows it: between the transition written
// before the request and the one written after its answer.
func TestJobFilesReadInTheirLanguage(t *testing.T) {
	e := newEnv(t)
	held, applied, run := heldTopUp(t, e)
	o := jobs.FileOptions{Locale: "id", Location: jakarta(t)}
	dir := t.TempDir()
	for name, table := range map[string]*jobs.Table{
		"plan.xlsx":   jobs.PlanTable(held, o),
		"result.xlsx": jobs.ResultTable(applied, run, o),
	} {
		path := filepath.Join(dir, name)
		if err := jobs.WriteTableFile(path, table, o); err != nil {
			t.Fatal(err)
		}
		rows := workbookCells(t, path)
		for sheet, cells := range rows {
			for r, row := range cells {
				for c, v := range row {
					if w := englishWord(v); w != "" {
						t.Errorf("%s %s row %d column %d %q: English %q in an Indonesian file", name, sheet, r+1, c+1, v, w)
					}
				}
			}
		}
		data := rows[table.Name]
		for a := 0; a < len(table.Columns); a++ {
			for b := a + 1; b < len(table.Columns); b++ {
				if same, any := sameColumn(data, a, b); same && any {
					t.Errorf("%s: column %q repeats column %q", name, table.Columns[b].Title, table.Columns[a].Title)
				}
			}
		}
	}

	// The held rows: the balance as the service answered the send they repeat, and that send's moment.
	j := e.open()
	defer j.Close()
	table := jobs.PlanTable(held, o)
	col := func(key string) int {
		for i, c := range table.Columns {
			if c.Key == key {
				return i
			}
		}
		t.Fatalf("no column %s", key)
		return 0
	}
	change, repeatOf := col("change"), col("repeat_of")
	for i, a := range held.Actions {
		if a.State != jobs.Held {
			continue
		}
		var sentAt, answeredAt time.Time
		var balance string
		err := j.DB().QueryRow(`SELECT s.recorded_at, (SELECT min(n.recorded_at) FROM job_actions n
			WHERE n.plan_id = s.plan_id AND n.action_id = s.action_id AND n.id > s.id), st.detail->>'$.balance'
			FROM job_actions s JOIN job_action_state st USING (plan_id, action_id)
			WHERE s.plan_id = ? AND s.seq = ? AND s.state = 'sent'`, applied.ID, a.Detail["repeatOfSeq"]).Scan(&sentAt, &answeredAt, &balance)
		if err != nil {
			t.Fatal(err)
		}
		loc := jakarta(t)
		when := fmt.Sprintf("dikirim antara %s dan %s", sentAt.In(loc).Format("2006-01-02 15:04:05"), answeredAt.In(loc).Format("15:04:05 MST"))
		row := table.Rows[i]
		if want := "saldo " + sheetfmt.Group(mustInt(t, balance), "id") + " menurut jawaban layanan atas kiriman itu (" + when + ")"; !strings.HasPrefix(row[change], want) {
			t.Errorf("held row %d: change %q, want the balance the service answered the earlier send with: %q", a.Seq, row[change], want)
		}
		if !strings.Contains(row[repeatOf], when) {
			t.Errorf("held row %d: repeats %q, want the send said as %q", a.Seq, row[repeatOf], when)
		}
	}
}

// TestJobFilesPrinted prints a plan file with held rows and a result file through LibreOffice (Carlito) and
// measures every page: body text at least sheetfmt.MinBodyPt, footers sheetfmt.MinFooterPt, each sheet one
// page wide (its first and last printed headers on every page), the header repeated on a sheet of more than
// one page. In both locales.
func TestJobFilesPrinted(t *testing.T) {
	sheetpdf.Require(t)
	e := newEnv(t)
	held, applied, run := heldTopUp(t, e)
	// The week's plan applied too: its result has held rows beside sent ones.
	heldRes := e.apply(held.ID)
	j := e.open()
	heldRuns, err := j.Runs(context.Background(), held.ID)
	j.Close()
	if err != nil || len(heldRuns) != 1 {
		t.Fatalf("runs of %s: %v %v", held.ID, heldRuns, err)
	}
	dir := t.TempDir()
	type file struct {
		table *jobs.Table
		path  string
	}
	var files []file
	var paths []string
	for _, locale := range []string{"id", "en"} {
		o := jobs.FileOptions{Locale: locale, Location: jakarta(t)}
		for name, table := range map[string]*jobs.Table{"plan": jobs.PlanTable(held, o), "result": jobs.ResultTable(applied, run, o),
			"result-held": jobs.ResultTable(heldRes.Plan, &heldRuns[0], o)} {
			path := filepath.Join(dir, name+"-"+locale+".xlsx")
			if err := jobs.WriteTableFile(path, table, o); err != nil {
				t.Fatal(err)
			}
			files = append(files, file{table, path})
			paths = append(paths, path)
		}
	}
	docs := sheetpdf.Convert(t, dir, paths...)
	for _, f := range files {
		doc := docs[f.path]
		name := filepath.Base(f.path)
		f0, err := excelize.OpenFile(f.path)
		if err != nil {
			t.Fatal(err)
		}
		sheets := f0.GetSheetList()
		f0.Close()
		pages := map[string][]int{}
		for i, p := range doc.Pages {
			sheet := p.Sheet(sheets)
			pages[sheet] = append(pages[sheet], i)
			if !p.A4() || !p.Landscape() {
				t.Errorf("%s page %d: %.0f x %.0f pt, want A4 landscape", name, i+1, p.Width, p.Height)
			}
			if p.Body < sheetfmt.MinBodyPt-0.05 {
				t.Errorf("%s page %d (%s): text prints at %.1f pt, want at least %d", name, i+1, sheet, p.Body, sheetfmt.MinBodyPt)
			}
			if p.Footer < sheetfmt.MinFooterPt-0.05 {
				t.Errorf("%s page %d (%s): footer prints at %.1f pt, want at least %d", name, i+1, sheet, p.Footer, sheetfmt.MinFooterPt)
			}
		}
		for _, sheet := range sheets {
			n := len(pages[sheet])
			body, foot := 99.0, 99.0
			for _, i := range pages[sheet] {
				body, foot = min(body, doc.Pages[i].Body), min(foot, doc.Pages[i].Footer)
			}
			t.Logf("%s %s: %d pages, body %.1f pt, footer %.1f pt", name, sheet, n, body, foot)
			if n == 0 {
				t.Errorf("%s: sheet %s does not print", name, sheet)
			}
			if n > 1 && !sheetpdf.PrintTitles(t, f.path, sheet) {
				t.Errorf("%s: sheet %s prints on %d pages without print titles", name, sheet, n)
			}
		}
		// One sheet-width per page: the rows sheet's first and last printed headers (its print area's)
		// on each of its pages.
		first, last := printedHeaders(t, f.path, f.table.Name)
		for _, i := range pages[f.table.Name] {
			for _, h := range []string{first, last} {
				for _, w := range strings.Fields(h) {
					if !strings.Contains(doc.Pages[i].Text, w) {
						t.Errorf("%s page %d: no header %q (the page is not the sheet's full width)", name, i+1, h)
					}
				}
			}
		}
	}
}

// printedHeaders are the headers of the first and last column of a sheet's print area.
func printedHeaders(t *testing.T, path, sheet string) (first, last string) {
	t.Helper()
	f, err := excelize.OpenFile(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, d := range f.GetDefinedName() {
		if d.Name != "_xlnm.Print_Area" || d.Scope != sheet {
			continue
		}
		m := regexp.MustCompile(`!\$A\$1:\$([A-Z]+)\$\d+$`).FindStringSubmatch(d.RefersTo)
		if m == nil {
			t.Fatalf("%s: print area %q", sheet, d.RefersTo)
		}
		first, _ = f.GetCellValue(sheet, "A1")
		last, _ = f.GetCellValue(sheet, m[1]+"1")
		return first, last
	}
	t.Fatalf("%s: no print area", sheet)
	return "", ""
}

// workbookCells are a workbook's cells as text, by sheet.
func workbookCells(t *testing.T, path string) map[string][][]string {
	t.Helper()
	f, err := excelize.OpenFile(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string][][]string{}
	for _, sh := range f.GetSheetList() {
		rows, err := f.GetRows(sh)
		if err != nil {
			t.Fatal(err)
		}
		out[sh] = rows
	}
	return out
}

// sameColumn says whether columns a and b of data rows (after the header) hold the same text in every
// row, and whether any of it is not empty.
func sameColumn(rows [][]string, a, b int) (same, any bool) {
	get := func(r []string, i int) string {
		if i < len(r) {
			return r[i]
		}
		return ""
	}
	if len(rows) < 2 {
		return false, false
	}
	for _, r := range rows[1:] {
		if get(r, a) != get(r, b) {
			return false, any
		}
		any = any || get(r, a) != ""
	}
	return true, any
}

// englishWords are words billsync writes in its English files that an Indonesian one must not show.
// Input column names (customerId, amount, repeat), IDs, names, e-mails and the service's own messages are
// data, not words of the file.
var englishWords = regexp.MustCompile(`(?i)\b(balance|customer|plan|row|line|sent|between|held|incomplete|completed|succeeded|failed|not sent|again|yes in|of topup|earlier|status of|as of|sync|planned|run|approved|never|not yet)\b`)

// dataCell are cells that are data whatever the file's language: IDs, input column names, the service's
// answer and the -again flag's name.
var dataCell = regexp.MustCompile(`^(customerId|productId|amount|repeat|success|credit-topup|default|test|[0-9a-f-]{8,}|https?://\S+)$`)

func englishWord(v string) string {
	if dataCell.MatchString(v) {
		return ""
	}
	v = strings.ReplaceAll(v, "-again", "")
	v = regexp.MustCompile(`\S+\.(csv|xlsx)`).ReplaceAllString(v, "")
	return englishWords.FindString(v)
}

func mustInt(t *testing.T, s string) int64 {
	t.Helper()
	var n int64
	if _, err := fmt.Sscan(s, &n); err != nil {
		t.Fatalf("%q: %v", s, err)
	}
	return n
}

// TestServiceHeldRowReadsInItsLanguage: a row held by the service's own record (a dashboard top-up after the
// plan, not a send of billsync's) reads in the Indonesian result file as the journal-held ones do: what holds
// it in Indonesian with the record's ID, and the balance as of the sync that holds that record.
func TestServiceHeldRowReadsInItsLanguage(t *testing.T) {
	e := newEnv(t)
	cs := e.customers(1)
	p := e.topupProduct()
	plan := e.mustPlan(jobs.CreditTopup, e.topupCSV("topup.csv", []topupRow{{c: cs[0], amount: 800}}))
	e.sb.Advance(10 * time.Minute)
	if _, err := e.client(testKey).AddCredit(context.Background(), api.AddCreditRequest{CustomerID: cs[0].ID, ProductID: p.ID,
		Amount: 800}); err != nil {
		t.Fatal(err)
	}
	res := e.apply(plan.ID)
	if a := res.Plan.Actions[0]; a.State != jobs.Held || a.Detail["onServiceIds"] == "" {
		t.Fatalf("a dashboard top-up after planning: %s %v; want held by the service's record", a.State, a.Detail)
	}
	o := jobs.FileOptions{Locale: "id", Location: jakarta(t)}
	table := jobs.ResultTable(res.Plan, nil, o)
	path := filepath.Join(t.TempDir(), "result.xlsx")
	if err := jobs.WriteTableFile(path, table, o); err != nil {
		t.Fatal(err)
	}
	for sheet, rows := range workbookCells(t, path) {
		for r, row := range rows {
			for c, v := range row {
				if w := englishWord(v); w != "" {
					t.Errorf("%s row %d column %d %q: English %q in an Indonesian file", sheet, r+1, c+1, v, w)
				}
			}
		}
	}
	for i, c := range table.Columns {
		if c.Key == "repeat_of" {
			if v := table.Rows[0][i]; !strings.Contains(v, "catatan layanan") || !strings.Contains(v, res.Plan.Actions[0].Detail["onServiceIds"]) {
				t.Errorf("held by the service's record: %q, want it named by its ID", v)
			}
		}
	}
}

// TestAbsentSendSaidAsWhatItIs: a top-up whose answer was a 500 and that the service's history proves absent
// is journaled not applied with evidence that says the send as the journal knows it, between the
// transition written before the request and the one after its answer, not as one instant a minute
// before it (the clocks' margin is said as such).
func TestAbsentSendSaidAsWhatItIs(t *testing.T) {
	e := newEnv(t)
	plan, _, _, _ := topupPlan(e, 900)
	if err := e.sb.FailNext(sandbox.FaultServerError, 1, "/credit/v1/credit/customer/add-credit"); err != nil {
		t.Fatal(err)
	}
	e.apply(plan.ID)
	e.sb.Advance(time.Hour) // past the settle interval: a read that finds nothing proves the top-up absent
	e.apply(plan.ID)
	j := e.open()
	defer j.Close()
	var sentAt, answeredAt time.Time
	var evidence string
	err := j.DB().QueryRow(`SELECT s.recorded_at,
		(SELECT min(n.recorded_at) FROM job_actions n WHERE n.plan_id = s.plan_id AND n.action_id = s.action_id AND n.id > s.id),
		(SELECT n.detail->>'$.reconciled' FROM job_actions n WHERE n.plan_id = s.plan_id AND n.action_id = s.action_id AND n.state = 'not_applied')
		FROM job_actions s WHERE s.plan_id = ? AND s.seq = 1 AND s.state = 'sent' ORDER BY s.id LIMIT 1`, plan.ID).Scan(&sentAt, &answeredAt, &evidence)
	if err != nil {
		t.Fatalf("%v (journal: %s)", err, history(e, plan.ID, 1))
	}
	want := fmt.Sprintf("sent between %s and %s", sentAt.UTC().Format("2006-01-02 15:04:05"), answeredAt.UTC().Format("15:04:05 UTC"))
	if !strings.Contains(evidence, want) || !strings.Contains(evidence, "before it for the clocks") {
		t.Errorf("evidence %q, want the send said as %q and the clocks' margin as such", evidence, want)
	}
}
