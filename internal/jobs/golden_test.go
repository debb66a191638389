package jobs_test

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/billsync/billsync/internal/jobs"
)

// TestPlanAndResultFilesGolden pins what a finance user reviews: the plan file and the result file.
func TestPlanAndResultFilesGolden(t *testing.T) {
	e := newEnv(t)
	cs := e.customers(2)
	p := e.product(creditUsage)
	in := e.file("topup.csv", "customerId,productId,amount", cs[0].ID+","+p.ID+",500", cs[1].ID+","+p.ID+",1250")
	plan := e.mustPlan(jobs.CreditTopup, in)
	res := e.apply(plan.ID)
	for _, f := range []struct {
		name  string
		table *jobs.Table
	}{{"plan_topup.golden.csv", jobs.PlanTable(plan, jobs.FileOptions{})},
		{"result_topup.golden.csv", jobs.ResultTable(res.Plan, nil, jobs.FileOptions{})}} {
		path := e.dir + "/" + f.name
		if err := jobs.WriteTableFile(path, f.table, jobs.FileOptions{}); err != nil {
			t.Fatal(err)
		}
		b, _ := os.ReadFile(path)
		checkGolden(t, f.name, string(b))
	}
}

// BenchmarkPlanTopup plans a 2,000-row top-up file against the warehouse (reads, checks, stores).
func BenchmarkPlanTopup(b *testing.B) {
	sharedWarehouse(b)
	sb := newSandbox(b)
	var custs []string
	for _, raw := range sb.Dump("customers") {
		var c simCustomer
		jsonUnmarshal(raw, &c)
		custs = append(custs, c.ID)
	}
	var prods []string
	for _, raw := range sb.Dump("products") {
		var p simProduct
		jsonUnmarshal(raw, &p)
		if creditUsage(p) && p.Status == "active" {
			prods = append(prods, p.ID)
		}
	}
	lines := []string{"customerId,productId,amount"}
	for i := 0; len(lines) <= 2000 && i < len(custs)*len(prods); i++ {
		lines = append(lines, fmt.Sprintf("%s,%s,%d", custs[i%len(custs)], prods[i/len(custs)], 100+i))
	}
	t := &testing.T{}
	e := &env{t: t, dir: b.TempDir(), wh: whPath}
	in := e.file("big.csv", lines...)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		e.journal = fmt.Sprintf("%s/j%d.duckdb", e.dir, i)
		if _, err := e.plan(jobs.CreditTopup, in); err != nil {
			b.Fatal(strings.SplitN(err.Error(), "\n", 3))
		}
	}
	b.ReportMetric(float64(len(lines)-1), "rows/op")
}
