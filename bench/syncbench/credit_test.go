package main

import (
	"testing"
	"time"
)

// TestCeilingReadsWhatItMust: the ceiling reads a customer the night after its credit moved, a
// quiet one only when one more night would break the bound, and a new one only if it moved.
func TestCeilingReadsWhatItMust(t *testing.T) {
	day := 24 * time.Hour
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(n int) time.Time { return t0.Add(time.Duration(n) * day) }
	c := newCeiling(3*day, day) // a 3-day bound, nightly runs
	live := map[string]bool{"quiet": true, "busy": true}
	truth := []ledgerTruth{
		{ID: "seeded", CustomerID: "busy", CreatedAt: at(0).Add(-time.Hour)}, // before the first sync
		{ID: "b1", CustomerID: "busy", CreatedAt: at(1).Add(-time.Hour)},
		{ID: "b2", CustomerID: "busy", CreatedAt: at(1).Add(-2 * time.Hour)}, // one night, one read
		{ID: "b4", CustomerID: "busy", CreatedAt: at(4)},                     // at the run's own instant
		{ID: "n5", CustomerID: "new-moved", CreatedAt: at(5).Add(-time.Hour)},
	}
	want := []ceilingNight{
		{firstSync: true}, // night 0: the first sync reads everyone
		{hits: 1},         // night 1: busy moved twice, one read
		{},                // night 2: quiet 2 days old, 3 at the next run: within the bound
		{forced: 1},       // night 3: quiet would be 4 days old at the next run; busy 2
		{hits: 1},         // night 4: busy moved at the run's own instant
		{hits: 1},         // night 5: two new customers, only the one that moved is read
		{forced: 1},       // night 6: quiet again (read on night 3)
		{forced: 1},       // night 7: busy (read on night 4); the new ones are 2 days old
	}
	for night, w := range want {
		if night == 5 {
			live["new-quiet"], live["new-moved"] = true, true
		}
		if got := c.night(at(night), live, truth); got != w {
			t.Errorf("night %d: got %+v, want %+v", night, got, w)
		}
	}
	var sum creditTotal
	sum.add(2, creditStats{best: ceilingNight{hits: 3, forced: 1}})
	sum.add(3, creditStats{best: ceilingNight{hits: 1, forced: 5}})
	if got, want := sum.best.String(), "a reader that knew when credit moved: 10 reads, 4 found an entry (40%)"; got != want {
		t.Errorf("summed: %q, want %q", got, want)
	}
}
