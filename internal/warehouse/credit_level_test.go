package warehouse

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/billsync/billsync/internal/entity"
	"github.com/billsync/billsync/internal/syncdata"
)

// TestCreditTargetsLevel runs simulated nights of a base read all at once (a first sync), reading
// exactly the targets each night. Customers whose credit no reason names come due for the bound
// together; the reads ahead of it spread them so that no night after the first reads much more
// than its share of the base (base ÷ runs per bound period), the nights of a period read no more
// than the bound alone would, every customer stays within the refresh bound at every foreseen
// run, daily users are read every night, and a run's budget takes every other reason first.
func TestCreditTargetsLevel(t *testing.T) {
	for _, tc := range []struct {
		name         string
		refresh      time.Duration
		quiet, daily int            // customers with no history; customers whose credit moves daily
		nights       int            // runs after the first sync
		skip         map[int]int    // night -> days skipped before it (cron did not run)
		added        map[int]int    // night -> customers first listed that night
		maxReads     int            // most reads on any night after the first, but the nights of skips and additions
		periodReads  map[[2]int]int // nights [from, to] -> most reads in total
		noAhead      bool           // every customer is due for the bound each run: nothing to read ahead
	}{
		{
			// The bound alone reads all 600 on nights 6, 12 and 18: 1,800 reads, and 30 a night
			// for the daily users. A share is 100 a night.
			name: "first sync, 7-day bound", refresh: 7 * day, quiet: 600, daily: 30, nights: 18,
			maxReads:    100 + 30 + 2,
			periodReads: map[[2]int]int{{1, 6}: 600 + 6*30 + 6, {1, 18}: 3*600 + 18*30 + 6},
		},
		{
			// Night 10 reads the 300 newcomers; levelled again within a period: a share is 150.
			name: "customers added later", refresh: 7 * day, quiet: 600, nights: 24, added: map[int]int{10: 300},
			maxReads:    150 + 2,
			periodReads: map[[2]int]int{{1, 6}: 600 + 6, {11, 22}: 2*900 + 6},
		},
		{
			// Cron misses three nights before night 6: that run reads everyone who would pass
			// the bound before a run as far away again, then the lump is levelled.
			name: "runs skipped", refresh: 7 * day, quiet: 600, nights: 20, skip: map[int]int{6: 3},
			maxReads: 100 + 2,
		},
		{
			// 29 runs per bound period: about 21 a night. Predicting 29 runs ahead from one gap,
			// cron's minutes add up to a run (the bound's spare is an eighth of one): a night
			// now and then reads up to half a share more, a period 2% more.
			name: "30-day bound", refresh: 30 * day, quiet: 600, nights: 34,
			maxReads:    21 + 11,
			periodReads: map[[2]int]int{{1, 29}: 600 + 12},
		},
		{
			name: "24-hour bound", refresh: day, quiet: 200, daily: 10, nights: 4, maxReads: 210, noAhead: true,
		},
		{
			name: "bound shorter than the gap", refresh: 12 * time.Hour, quiet: 200, nights: 4, maxReads: 200, noAhead: true,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			b := startBuild(t, newPath(t))
			run := startRun(t, b, "acct")
			start := t0.Add(-100 * day)
			load(t, b, entity.Products, run, start, true, `{"id":"credit-prod","type":"saas","subType":"credit_usage"}`)
			var custs []string
			customer := func(i int) {
				custs = append(custs, fmt.Sprintf(`{"id":"c%04d","createdAt":1700000000000}`, i))
			}
			for i := range tc.quiet + tc.daily {
				customer(i)
			}
			load(t, b, entity.Customers, run, start, true, custs...)
			daily := map[string]bool{}
			var ledger []string
			for i := range tc.daily {
				id := fmt.Sprintf("c%04d", tc.quiet+i)
				daily[id] = true
				ledger = append(ledger, ledgerRow(id+"-0", id, "credit-prod", start.Add(-91*day), 1_000_000, 0, time.Time{}))
				for d := 1; d <= 90; d++ {
					ledger = append(ledger, ledgerRow(fmt.Sprintf("%s-%d", id, d), id, "credit-prod", start.Add(-time.Duration(d)*day), 0, 1, time.Time{}))
				}
			}
			load(t, b, entity.CreditLedger, run, start, false, ledger...)

			last := map[string]time.Time{}
			reads := make([]int, tc.nights+1)
			now := start
			for night := 0; night <= tc.nights; night++ {
				// cron starts each night's run at about the same time, a few minutes early or late
				now = start.Add(time.Duration(night)*day + time.Duration(night%3-1)*5*time.Minute)
				now = now.Add(time.Duration(skippedBefore(tc.skip, night)) * day)
				if n := tc.added[night]; n > 0 {
					for range n {
						customer(len(custs)) // ids continue after the base
					}
					load(t, b, entity.Customers, run, now, true, custs...)
				}
				var moved []string // the daily users' credit moved since the last run
				for id := range daily {
					moved = append(moved, ledgerRow(fmt.Sprintf("%s-n%d", id, night), id, "credit-prod", now.Add(-time.Hour), 0, 1, time.Time{}))
				}
				if len(moved) > 0 {
					load(t, b, entity.CreditLedger, run, now, false, moved...)
				}
				plan := syncdata.CreditPlan{Now: now, Refresh: tc.refresh}
				got, err := b.creditTargets(ctx, "acct", plan, 1_000_000)
				if err != nil {
					t.Fatal(err)
				}
				var ids []string
				reasons := map[string]int{}
				for _, c := range got {
					ids = append(ids, c.CustomerID)
					reasons[c.Reason]++
					last[c.CustomerID] = now
				}
				reads[night] = len(ids)
				if tc.noAhead && (reasons["ahead"] > 0 || len(ids) != len(custs)) {
					t.Errorf("night %d: %v, want all %d due for the bound and none read ahead", night, reasons, len(custs))
				}
				if night > 0 && tc.skip[night] == 0 && tc.added[night] == 0 && len(ids) > tc.maxReads {
					t.Errorf("night %d: %d reads (%v), over %d", night, len(ids), reasons, tc.maxReads)
				}
				for id := range daily {
					if night > 0 && last[id] != now {
						t.Errorf("night %d: daily user %s not read", night, id)
					}
				}
				if reasons["ahead"] > 0 {
					// A budget that covers the other reasons only reads none ahead.
					others := len(ids) - reasons["ahead"]
					few, err := b.creditTargets(ctx, "acct", plan, others)
					if err != nil {
						t.Fatal(err)
					}
					for _, c := range few {
						if c.Reason == "ahead" {
							t.Fatalf("night %d: with a budget of %d, %s read ahead before another reason", night, others, c.CustomerID)
						}
					}
				}
				if err := b.markCreditFetched(ctx, "acct", ids, nil, now, run.ID); err != nil {
					t.Fatal(err)
				}
				// Before the next run, if it comes no later than this one did after the previous
				// (a skip cannot be foreseen) and the bound can hold at all (not shorter than the
				// runs' gap), every customer's last read is within the bound.
				next := start.Add(time.Duration(night+1)*day + 5*time.Minute).Add(time.Duration(skippedBefore(tc.skip, night+1)) * day)
				if tc.skip[night+1] > 0 || next.Sub(now) >= tc.refresh {
					continue
				}
				for i := range custs {
					id := fmt.Sprintf("c%04d", i)
					if age := next.Sub(last[id]); age > tc.refresh {
						t.Fatalf("night %d: %s last read %v before the next run, over the bound %v", night, id, age, tc.refresh)
					}
				}
			}
			for span, most := range tc.periodReads {
				total := 0
				for n := span[0]; n <= span[1]; n++ {
					total += reads[n]
				}
				if total > most {
					t.Errorf("nights %d-%d: %d reads, over %d", span[0], span[1], total, most)
				}
			}
			t.Logf("reads per night: %v", reads)
		})
	}
}

func skippedBefore(skip map[int]int, night int) int {
	n := 0
	for at, d := range skip {
		if night >= at {
			n += d
		}
	}
	return n
}
