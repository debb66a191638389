package main

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"
)

// TestCeiling: the ceiling is the best order of reads knowing the future, not the reader that reads
// each customer the night its credit moved (which reads "late2" three times, finding two entries).
func TestCeiling(t *testing.T) {
	day := 24 * time.Hour
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(run int) time.Time { return t0.Add(time.Duration(run) * day) } // run 1 is the first sync
	movedAt := func(id string, runs ...int) []ledgerTruth {
		var out []ledgerTruth
		for i, r := range runs {
			out = append(out, ledgerTruth{ID: fmt.Sprintf("%s-%d", id, i), CustomerID: id, CreatedAt: at(r).Add(-time.Hour)})
		}
		return out
	}
	type customer struct {
		id          string
		first, last int   // the runs it is live in
		moved       []int // the runs whose night its credit moved in
	}
	for _, tc := range []struct {
		name        string
		customers   []customer
		hits, reads int64
	}{
		{"never moves: the bound's reads alone", []customer{{"quiet", 1, 15, nil}}, 0, 2},
		// reads on runs 8 and 15 each find one: the reader of the night a credit moved reads 2, 9 and 10
		{"moves every eight nights: late reads find them all", []customer{{"late2", 1, 15, []int{2, 10}}}, 2, 2},
		// one read finds it, and one more keeps the bound to the end
		{"moves once, early", []customer{{"once", 1, 15, []int{2}}}, 1, 2},
		// a read on run 3, and one as late as run 10 finds run 4's entry and keeps the bound
		{"moves on runs 3 and 4", []customer{{"twice", 1, 15, []int{3, 4}}}, 2, 2},
		{"both", []customer{{"quiet", 1, 15, nil}, {"late2", 1, 15, []int{2, 10}}}, 2, 4},
		// reading the busy customer every night raises the share from 2 of 4 to 14 of 16
		{"moves every night: read every night", []customer{{"quiet", 1, 15, nil}, {"busy", 1, 15, []int{2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}}}, 14, 16},
		// first seen on run 5 with a trial that night: one read, as late as run 11, finds it
		{"new customer", []customer{{"new", 5, 15, []int{5}}}, 1, 1},
		{"deleted after run 6", []customer{{"gone", 1, 6, nil}}, 0, 0},
		{"deleted after run 9: read once by then", []customer{{"gone", 1, 9, nil}}, 0, 1},
		{"moved before it was first seen: not a hit", []customer{{"old", 4, 15, nil}}, 0, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newCeiling(7*day, day)
			var truth []ledgerTruth
			for _, cu := range tc.customers {
				truth = append(truth, movedAt(cu.id, cu.moved...)...)
			}
			if tc.name == "moved before it was first seen: not a hit" {
				truth = append(truth, movedAt("old", 2)...)
			}
			for run := 1; run <= 15; run++ {
				live := map[string]bool{}
				for _, cu := range tc.customers {
					if run >= cu.first && run <= cu.last {
						live[cu.id] = true
					}
				}
				c.add(at(run), live, truth)
			}
			if hits, reads := c.best(); hits != tc.hits || reads != tc.reads {
				t.Errorf("got %d hits in %d reads, want %d in %d", hits, reads, tc.hits, tc.reads)
			}
		})
	}
}

// TestCeilingAgainstEveryOrder: for small customers, the dynamic programme agrees with trying every
// order of reads that keeps the bound, and no order finds an entry in a larger share of its reads.
func TestCeilingAgainstEveryOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := range 3000 {
		k := 1 + rng.IntN(5)
		last := 3 + rng.IntN(10)
		l := &creditLife{start: 1 + rng.IntN(2)}
		l.end = l.start + 1 + rng.IntN(last-l.start)
		for run := l.start + 1; run <= l.end; run++ {
			if rng.IntN(3) == 0 {
				l.moved = append(l.moved, run)
			}
		}
		need := l.end
		if l.end == last {
			need = last + 1
		}
		wantH, wantR, bestShare := -1, 0, 0.0
		span := l.end - l.start // reads may fall on runs start+1..end
		for mask := 0; mask < 1<<span; mask++ {
			prev, h, r, ok := l.start, 0, 0, true
			for i := range span {
				if mask&(1<<i) == 0 {
					continue
				}
				run := l.start + 1 + i
				if run-prev > k {
					ok = false
					break
				}
				for _, m := range l.moved {
					if m > prev && m <= run {
						h++
						break
					}
				}
				r++
				prev = run
			}
			if !ok || need-prev > k {
				continue
			}
			if h > wantH || (h == wantH && r < wantR) {
				wantH, wantR = h, r
			}
			if r > 0 {
				bestShare = max(bestShare, float64(h)/float64(r))
			}
		}
		if h, r := l.best(k, last); h != wantH || r != wantR {
			t.Fatalf("trial %d: k %d, runs %d-%d of %d, moved %v: got %d hits in %d reads, every order says %d in %d",
				trial, k, l.start, l.end, last, l.moved, h, r, wantH, wantR)
		}
		if h, r := l.best(k, last); r > 0 && float64(h)/float64(r) < bestShare-1e-12 {
			t.Fatalf("trial %d: k %d, runs %d-%d of %d, moved %v: %d of %d reads, where an order finds %.2f",
				trial, k, l.start, l.end, last, l.moved, h, r, bestShare)
		}
	}
}
