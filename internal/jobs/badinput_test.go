package jobs_test

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/billsync/billsync/internal/jobs"
)

// syncedRe matches the warehouse's sync time, which is wall-clock time and so not golden.
var syncedRe = regexp.MustCompile(`synced \d{4}-\d\d-\d\d \d\d:\d\d UTC`)

var update = flag.Bool("update", false, "rewrite golden files")

// TestBadInputNamesLineAndColumnAndSendsNothing plans broken files: each gets a clear error naming file,
// line and column, no plan is stored and no request reaches the service.
func TestBadInputNamesLineAndColumnAndSendsNothing(t *testing.T) {
	e := newEnv(t)
	cs := e.customers(3)
	p := e.product(creditUsage)
	notCredit := e.product(func(p simProduct) bool { return !creditUsage(p) })
	ok := func(c simCustomer, amount string) string { return c.ID + "," + p.ID + "," + amount }
	cases := []struct {
		name  string
		kind  jobs.Kind
		lines []string
		want  []string // substrings of the error
	}{
		{"malformed csv", jobs.CreditTopup, []string{"customerId,productId,amount", ok(cs[0], "5"), `x,"unterminated,5`},
			[]string{"line 3", "malformed CSV"}},
		{"wrong header", jobs.CreditTopup, []string{"customer,product,amount", ok(cs[0], "5")},
			[]string{"line 1", "missing column(s) productId, customerId or customerEmail"}},
		{"bad e-mail", jobs.EmailFix, []string{"fromEmail,toEmail", cs[0].Email + ",not-an-address"},
			[]string{"line 2 column B (toEmail)", "not an e-mail address"}},
		{"negative amount", jobs.CreditTopup, []string{"customerId,productId,amount", ok(cs[0], "-5")},
			[]string{"line 2 column C (amount)", "must be positive"}},
		{"amount with separators", jobs.CreditTopup, []string{"customerId,productId,amount", ok(cs[0], `"1,000"`)},
			[]string{"line 2 column C (amount)", `"1,000" is not a whole number in digits: write 1000`}},
		{"unknown customer", jobs.CreditTopup, []string{"customerId,productId,amount", "no-such-customer," + p.ID + ",5"},
			[]string{"line 2 column A (customerId)", `no customer "no-such-customer"`}},
		{"not a credit product", jobs.CreditTopup, []string{"customerId,productId,amount", cs[0].ID + "," + notCredit.ID + ",5"},
			[]string{"line 2 column B (productId)", "not a credit-usage product"}},
		{"duplicate rows", jobs.CreditTopup, []string{"customerId,productId,amount", ok(cs[0], "5"), ok(cs[1], "5"), ok(cs[0], "7")},
			[]string{"line 4 column B (productId)", "duplicate", "already on line 2"}},
		{"toEmail taken", jobs.EmailFix, []string{"fromEmail,toEmail", cs[0].Email + "," + strings.ToUpper(cs[1].Email)},
			[]string{"line 2 column B (toEmail)", "already used by customer " + cs[1].ID}},
		{"blank toEmail", jobs.EmailFix, []string{"customerId,fromEmail,toEmail", "x," + cs[0].Email + ","},
			[]string{"every toEmail is blank", "rows left blank are left alone"}},
		{"unknown fromEmail", jobs.EmailFix, []string{"fromEmail,toEmail", "ghost@nowhere.example,new@x.example"},
			[]string{"line 2 column A (fromEmail)", "no customer has the e-mail"}},
		{"no rows", jobs.CreditTopup, []string{"customerId,productId,amount"}, []string{"no data rows"}},
	}
	var golden strings.Builder
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			in := e.file(fmt.Sprintf("bad%d.csv", i), tc.lines...)
			reqs := e.requests()
			_, err := e.plan(tc.kind, in)
			if err == nil {
				t.Fatal("planned a bad file")
			}
			inputErrors(t, err)
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error lacks %q:\n%v", w, err)
				}
			}
			if !strings.Contains(err.Error(), in) {
				t.Errorf("error does not name the file %s:\n%v", in, err)
			}
			if n := e.requests() - reqs; n != 0 {
				t.Errorf("%d requests sent for a bad file", n)
			}
			msg := syncedRe.ReplaceAllString(strings.ReplaceAll(err.Error(), e.dir, "$DIR"), "synced $$SYNCED")
			fmt.Fprintf(&golden, "== %s\n%s\n", tc.name, msg)
		})
	}
	j := e.open()
	defer j.Close()
	if ps, err := j.Plans(t.Context()); err != nil || len(ps) != 0 {
		t.Errorf("bad files stored %d plans (%v)", len(ps), err)
	}
	checkGolden(t, "bad_input.golden", golden.String())
}

// checkGolden compares got with testdata/name; -update rewrites it. Ids come from the seeded simulator, so
// the text is stable.
func checkGolden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if string(want) != got {
		t.Errorf("%s differs from the golden file; got:\n%s", name, got)
	}
}

func TestSkipBlankLeavesRowsOutAndIgnoresExtraColumns(t *testing.T) {
	e := newEnv(t)
	cs := e.customers(2)
	in := e.file("dq.csv", "customerId,name,fromEmail,toEmail,problem",
		fmt.Sprintf("%s,%s,%s,,duplicate", cs[0].ID, cs[0].Name, cs[0].Email),
		fmt.Sprintf("%s,%s,%s,fixed.%s,malformed", cs[1].ID, cs[1].Name, cs[1].Email, cs[1].Email))
	p := e.mustPlan(jobs.EmailFix, in, func(o *jobs.PlanOptions) { o.SkipBlank = true })
	if len(p.Actions) != 1 || p.Actions[0].Line != 3 || len(p.SkippedLines) != 1 || p.SkippedLines[0] != 2 {
		t.Fatalf("plan: %d actions, skipped %v", len(p.Actions), p.SkippedLines)
	}
}
