package warehouse

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/billsync/billsync/internal/entity"
	"github.com/billsync/billsync/internal/syncdata"
)

// BenchmarkCreditTargets200k: the credit targets of a nightly run over 200,000 customers (about
// scale 100), 20,000 of them with a history of 5 entries, read over the last 6 nights: the query
// each nightly run makes before its credit fan-out.
func BenchmarkCreditTargets200k(b *testing.B) {
	ctx := context.Background()
	path := b.TempDir() + "/bench.duckdb"
	build, err := StartBuild(ctx, path, BuildOptions{Log: quietLog})
	if err != nil {
		b.Fatal(err)
	}
	defer build.Close()
	run, err := build.startRun(ctx, "acct", t0)
	if err != nil {
		b.Fatal(err)
	}
	n, holders := benchRecords(200_000), benchRecords(20_000)
	stage := func(e entity.Name, recs func(add func(string))) {
		l, err := build.newLoader(ctx, e, run.ID, run.Account, t0.Add(-6*day))
		if err != nil {
			b.Fatal(err)
		}
		i := 0
		recs(func(r string) {
			if err := l.Add(1+i/100, i%100, []byte(r)); err != nil {
				b.Fatal(err)
			}
			i++
		})
		if _, err := l.Merge(ctx); err != nil {
			b.Fatal(err)
		}
	}
	stage(entity.Products, func(add func(string)) { add(`{"id":"credit-prod","type":"saas","subType":"credit_usage"}`) })
	stage(entity.Customers, func(add func(string)) {
		for i := range n {
			add(fmt.Sprintf(`{"id":"c%06d","createdAt":1700000000000}`, i))
		}
	})
	stage(entity.CreditLedger, func(add func(string)) {
		for i := range holders {
			c := fmt.Sprintf("c%06d", i*(n/holders))
			add(ledgerRow(c+"-0", c, "credit-prod", t0.Add(-60*day), 1000, 0, time.Time{}))
			for j := 1; j < 5; j++ {
				add(ledgerRow(fmt.Sprintf("%s-%d", c, j), c, "credit-prod", t0.Add(-6*day-time.Duration(j*(i%10+1))*day), 0, 1, time.Time{}))
			}
		}
	})
	for night := range 6 {
		var ids []string
		for i := night; i < n; i += 6 {
			ids = append(ids, fmt.Sprintf("c%06d", i))
		}
		if err := build.markCreditFetched(ctx, "acct", ids, nil, t0.Add(-time.Duration(6-night)*day), run.ID); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	for b.Loop() {
		got, err := build.creditTargets(ctx, "acct", syncdata.CreditPlan{Now: t0, Refresh: 7 * day}, 1<<30)
		if err != nil {
			b.Fatal(err)
		}
		if len(got) == 0 {
			b.Fatal("no targets")
		}
	}
}
