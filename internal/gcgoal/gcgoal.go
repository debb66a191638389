// Package gcgoal lowers Go's GC target for a stretch of work that runs beside DuckDB: the
// process's memory is DuckDB's limit plus Go's heap, so a heap allowed to double before a
// collection is what pushes a sync or a report run over its budget.
package gcgoal

import "runtime/debug"

// Lower sets Go's GC percent to percent unless the process already runs with a lower one, or
// with none (GOGC=off); the returned function restores the previous setting.
func Lower(percent int) (restore func()) {
	old := debug.SetGCPercent(percent)
	if old < percent {
		debug.SetGCPercent(old)
	}
	return func() { debug.SetGCPercent(old) }
}
