package duckfile

import (
	"path/filepath"
	"testing"
	"time"
)

// Opening a billsync DuckDB file sets DuckDB's allocator to return freed pages soon, for the arenas that exist
// and the ones created later, with background threads that do it on time; left at jemalloc's
// defaults, a first sync of ~1M records kept 200-600 MB of freed pages resident. DuckDB sets
// the background threads at every open from its allocator_background_threads option, so a
// handle opened without it turns them off; every handle (warehouse, report, journal) sets it.
func TestOpenReleasesFreedMemory(t *testing.T) {
	dir := t.TempDir()
	rw, err := Open(filepath.Join(dir, "a.duckdb"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer rw.Close()
	if _, err := rw.Exec("CREATE TABLE t (x INT)"); err != nil {
		t.Fatal(err)
	}
	rw.Close()
	// a read-only handle opened later must leave the background threads on
	ro, err := OpenReadOnly(filepath.Join(dir, "a.duckdb"))
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	if err := ro.Ping(); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]int64{"arenas.dirty_decay_ms": freedPagesDecayMs, "arena.0.dirty_decay_ms": freedPagesDecayMs,
		"arenas.muzzy_decay_ms": 0, "arena.0.muzzy_decay_ms": 0} {
		ms, err := freedMemoryDecay(name)
		if err != nil {
			t.Fatal(err)
		}
		if ms != want {
			t.Errorf("%s = %d, want %d", name, ms, want)
		}
	}
	if on, err := freedMemoryBackground(); err != nil || !on {
		t.Errorf("background threads on: %v, %v", on, err)
	}
}

// ReadAllocatorStats sees DuckDB's allocations: a table held in memory is in Allocated, and the
// figures nest as jemalloc defines them (allocated within active pages within resident ones).
func TestReadAllocatorStats(t *testing.T) {
	db, err := Open(filepath.Join(t.TempDir(), "a.duckdb"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	before, err := ReadAllocatorStats()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`CREATE TEMP TABLE t AS SELECT repeat('x', 100) || i AS s FROM range(200000) r(i)`); err != nil {
		t.Fatal(err)
	}
	s, err := ReadAllocatorStats()
	if err != nil {
		t.Fatal(err)
	}
	if s.Allocated < before.Allocated+10<<20 || s.Active < s.Allocated || s.Resident < s.Active || s.Mapped < s.Active || s.Arenas < 1 {
		t.Errorf("after a 20 MB table: %+v (before: %+v)", s, before)
	}
}

// ReturnFreedCMemory trims malloc's arenas on its interval while it runs, and not after stop.
func TestReturnFreedCMemoryRunsUntilStopped(t *testing.T) {
	start := trims.Load()
	stop := ReturnFreedCMemory(5 * time.Millisecond)
	deadline := time.Now().Add(5 * time.Second)
	for trims.Load() < start+3 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	stop()
	stopped := trims.Load()
	if stopped < start+3 {
		t.Fatalf("%d trims in 5 s at a 5 ms interval", stopped-start)
	}
	time.Sleep(50 * time.Millisecond)
	if n := trims.Load(); n != stopped {
		t.Errorf("%d trims after stop", n-stopped)
	}
	stop() // a second stop is harmless
}
