package jobs_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/billsync/billsync/internal/jobs"
	"github.com/xuri/excelize/v2"
)

// xlsxFile writes a one-sheet workbook; each cell is written with its Go type (string, int, float64, bool), so
// a test controls whether the spreadsheet holds text, a number or TRUE.
func (e *env) xlsxFile(name string, rows ...[]any) string {
	e.t.Helper()
	f := excelize.NewFile()
	defer f.Close()
	for i, r := range rows {
		cell, _ := excelize.CoordinatesToCellName(1, i+1)
		if err := f.SetSheetRow("Sheet1", cell, &r); err != nil {
			e.t.Fatal(err)
		}
	}
	p := filepath.Join(e.dir, name)
	if err := f.SaveAs(p); err != nil {
		e.t.Fatal(err)
	}
	return p
}

// TestMalformedInputsAreRefusedWithWhatToWrite plans each kind of malformed file a finance user produced:
// every one is refused before anything is sent (zero requests in the simulator's log, no plan stored), with
// every problem listed by file, line, column, value and what to write instead.
func TestMalformedInputsAreRefusedWithWhatToWrite(t *testing.T) {
	e := newEnv(t)
	cs := e.customers(3)
	p := e.product(creditUsage)
	row := func(c simCustomer, amount string) string { return c.ID + "," + p.ID + "," + amount }
	link := func(name, target string) string {
		path := filepath.Join(e.dir, name)
		if err := os.Symlink(target, path); err != nil {
			t.Fatal(err)
		}
		return path
	}
	fifo := filepath.Join(e.dir, "pipe.csv")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(e.dir, "folder.csv")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	big := filepath.Join(e.dir, "big.csv")
	if err := os.WriteFile(big, []byte("customerId,productId,amount\n"+strings.Repeat("x", jobs.MaxInputBytes)), 0o644); err != nil {
		t.Fatal(err)
	}
	manyRows := []string{"customerId,productId,amount"}
	for i := 0; i <= jobs.MaxInputRows; i++ {
		manyRows = append(manyRows, row(cs[i%3], "5"))
	}
	manyProblems := []string{"customerId,productId,amount"}
	for i := 0; i < 61; i++ {
		manyProblems = append(manyProblems, row(cs[i%3], fmt.Sprintf("%d.000", i+1)))
	}
	header := []any{"customerId", "productId", "amount"}
	cases := []struct {
		name string
		file string
	}{
		{"150.000 in a ; CSV", e.file("semi.csv", "customerId;productId;amount", strings.ReplaceAll(row(cs[0], "150.000"), ",", ";"))},
		{"150.000 in a quoted CSV", e.file("quoted.csv", "customerId,productId,amount", row(cs[0], `"150.000"`))},
		{"Rp150.000,- and 1.500.000,00", e.file("rp.csv", "customerId,productId,amount", row(cs[0], `"Rp150.000,-"`), row(cs[1], `"1.500.000,00"`))},
		{"0x1p4, 1e6, +150, 150.5, 1_000", e.file("floats.csv", "customerId,productId,amount", row(cs[0], "0x1p4"),
			row(cs[1], "1e6"), row(cs[2], "+150"), "x,"+p.ID+",150.5", "y,"+p.ID+",1_000")},
		{"150.000 in an xlsx text cell", e.xlsxFile("text.xlsx", header, []any{cs[0].ID, p.ID, "150.000"})},
		{"TRUE in an xlsx amount cell", e.xlsxFile("bool.xlsx", header, []any{cs[0].ID, p.ID, true})},
		{"150.5 in an xlsx number cell", e.xlsxFile("frac.xlsx", header, []any{cs[0].ID, p.ID, 150.5})},
		{"61 problems: the first 50 and a count", e.file("many.csv", manyProblems...)},
		{"/dev/zero behind a .csv name", link("zero.csv", "/dev/zero")},
		{"/dev/urandom behind a .xlsx name", link("random.xlsx", "/dev/urandom")},
		{"a named pipe", fifo},
		{"a directory", dir},
		{"a file above the size cap", big},
		{"a file above the row cap", e.file("rows.csv", manyRows...)},
		{"not a spreadsheet", link("plain.txt.gz", "/etc/hostname")},
	}
	var golden strings.Builder
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			reqs := e.requests()
			_, err := e.plan(jobs.CreditTopup, tc.file)
			if err == nil {
				t.Fatal("planned a malformed file")
			}
			inputErrors(t, err)
			if !strings.Contains(err.Error(), tc.file) {
				t.Errorf("the error does not name the file:\n%v", err)
			}
			if n := e.requests() - reqs; n != 0 {
				t.Errorf("%d requests sent for a malformed file", n)
			}
			fmt.Fprintf(&golden, "== %s\n%s\n", tc.name, strings.ReplaceAll(err.Error(), e.dir, "$DIR"))
		})
	}
	// Well-formed amounts in each form are accepted: digits as text, a whole number in a number cell.
	ok := e.xlsxFile("good.xlsx", header, []any{cs[0].ID, p.ID, "150000"}, []any{cs[1].ID, p.ID, 250000},
		[]any{cs[2].ID, p.ID, 2.5e5})
	plan, err := e.plan(jobs.CreditTopup, ok)
	if err != nil {
		t.Fatalf("good workbook: %v", err)
	}
	for i, want := range []string{"150000", "250000", "250000"} {
		if got := plan.Actions[i].Request["amount"]; got != want {
			t.Errorf("row %d amount %s, want %s", i+1, got, want)
		}
	}
	checkGolden(t, "malformed_input.golden", golden.String())
}
