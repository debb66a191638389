package warehouse

/*
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/types.h>

// DuckDB's allocator: the jemalloc it links, under its own prefix.
int duckdb_je_mallctl(const char *name, void *oldp, size_t *oldlenp, void *newp, size_t newlen);

// bs_release_immediately sets every jemalloc arena, present and future, to hand freed pages back
// to the kernel at once. It returns the first failing mallctl's error code, or 0.
static int bs_release_immediately(void) {
	ssize_t zero = 0;
	int err;
	if ((err = duckdb_je_mallctl("arenas.dirty_decay_ms", NULL, NULL, &zero, sizeof(zero))) != 0) return err;
	if ((err = duckdb_je_mallctl("arenas.muzzy_decay_ms", NULL, NULL, &zero, sizeof(zero))) != 0) return err;
	unsigned n = 0;
	size_t len = sizeof(n);
	if ((err = duckdb_je_mallctl("arenas.narenas", &n, &len, NULL, 0)) != 0) return err;
	char name[64];
	for (unsigned i = 0; i < n; i++) {
		// an arena not yet created fails with EFAULT: it will take the defaults above
		snprintf(name, sizeof(name), "arena.%u.dirty_decay_ms", i);
		duckdb_je_mallctl(name, NULL, NULL, &zero, sizeof(zero));
		snprintf(name, sizeof(name), "arena.%u.muzzy_decay_ms", i);
		duckdb_je_mallctl(name, NULL, NULL, &zero, sizeof(zero));
	}
	return 0;
}


// bs_decay reads how long an arena keeps freed pages (name: a decay_ms control).
static int bs_decay(const char *name, long long *ms) {
	ssize_t v = -2;
	size_t len = sizeof(v);
	int err = duckdb_je_mallctl(name, &v, &len, NULL, 0);
	*ms = v;
	return err;
}
*/
import "C"

import (
	"fmt"
	"sync"
	"unsafe"
)

// releaseFreedMemory makes DuckDB's allocator return freed memory to the kernel at once, in the
// whole process (every DuckDB handle shares the allocator).
//
// DuckDB allocates through the jemalloc it links, set to keep freed pages for a second; it
// purges them only when an arena is next busy enough, and arenas belong to the OS threads that
// Go's cgo calls happen to run on. A sync frees a lot: each merge drops its staged batch and
// temp tables, and DuckDB's buffer manager frees the blocks it spills. Measured at scale 100
// (syncbench -memtrace, DuckDB limit 512MB): 200-600 MB of RSS beyond what DuckDB tracks and
// Go maps, still there after DuckDB's tracked memory fell; with immediate release it is 30-60
// MB, for list-phase CPU time within the machine's noise. DuckDB's own settings did not reach
// it (allocator_background_threads, the flush thresholds), and jemalloc reads its options
// (DUCKDB_JE_MALLOC_CONF) only when the process starts, so the decay is set through
// jemalloc's control interface.
var releaseFreedMemory = sync.OnceValue(func() error {
	if rc := C.bs_release_immediately(); rc != 0 {
		return fmt.Errorf("jemalloc decay settings: error %d", int(rc))
	}
	return nil
})

// freedMemoryDecay reads a jemalloc decay control (e.g. "arenas.dirty_decay_ms", "arena.0.muzzy_decay_ms"):
// how many milliseconds freed pages stay resident.
func freedMemoryDecay(name string) (int64, error) {
	cname := C.CString(name)
	defer C.free(unsafe.Pointer(cname))
	var ms C.longlong
	if rc := C.bs_decay(cname, &ms); rc != 0 {
		return 0, fmt.Errorf("jemalloc %s: error %d", name, int(rc))
	}
	return int64(ms), nil
}
