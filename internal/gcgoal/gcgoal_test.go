package gcgoal

import (
	"runtime/debug"
	"testing"
)

func TestLower(t *testing.T) {
	orig := debug.SetGCPercent(100)
	defer debug.SetGCPercent(orig)
	for _, tc := range []struct{ before, during int }{
		{100, 25},
		{400, 25},
		{10, 10}, // a process already tighter keeps its setting
		{-1, -1}, // and one without a GC target (GOGC=off) too
	} {
		debug.SetGCPercent(tc.before)
		restore := Lower(25)
		if got := debug.SetGCPercent(tc.during); got != tc.during {
			t.Errorf("GOGC %d: %d while writing, want %d", tc.before, got, tc.during)
		}
		restore()
		if got := debug.SetGCPercent(tc.before); got != tc.before {
			t.Errorf("GOGC %d: %d after, want it restored", tc.before, got)
		}
	}
}
