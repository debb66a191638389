package warehouse

import "testing"

// Opening a build sets DuckDB's allocator to return freed pages at once, for the arenas that
// exist and the ones created later; left at jemalloc's defaults, a first sync of ~1M records kept
// 200-600 MB of freed pages resident.
func TestOpenReleasesFreedMemoryAtOnce(t *testing.T) {
	startBuild(t, newPath(t))
	for _, name := range []string{"arenas.dirty_decay_ms", "arenas.muzzy_decay_ms", "arena.0.dirty_decay_ms", "arena.0.muzzy_decay_ms"} {
		ms, err := freedMemoryDecay(name)
		if err != nil {
			t.Fatal(err)
		}
		if ms != 0 {
			t.Errorf("%s = %d, want 0", name, ms)
		}
	}
}
