package warehouse

import (
	"context"
	"testing"
)

// Opening a build sets DuckDB's allocator to return freed pages soon, for the arenas that exist
// and the ones created later, with background threads that do it on time; left at jemalloc's
// defaults, a first sync of ~1M records kept 200-600 MB of freed pages resident. DuckDB sets
// the background threads at every open from its allocator_background_threads option, so a
// handle opened without it turns them off; every warehouse handle sets it.
func TestOpenReleasesFreedMemory(t *testing.T) {
	startBuild(t, newPath(t))
	ro, err := OpenReadOnly(context.Background(), newPublished(t))
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
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

// newPublished is a published warehouse file to open read-only.
func newPublished(t *testing.T) string {
	path := newPath(t)
	b := startBuild(t, path)
	if err := b.Publish(context.Background()); err != nil {
		t.Fatal(err)
	}
	return path
}
