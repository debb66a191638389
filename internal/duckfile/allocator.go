package duckfile

/*
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <sys/types.h>

// DuckDB's allocator: the jemalloc it links, under its own prefix.
int duckdb_je_mallctl(const char *name, void *oldp, size_t *oldlenp, void *newp, size_t newlen);

// bs_set_decay sets every jemalloc arena, present and future, to hand freed pages back to the
// kernel after dirty_ms (muzzy: pages handed back lazily, which stay resident until the kernel
// wants them) and starts jemalloc's background threads, which do that on time even for an
// arena no thread is using. It returns the first failing mallctl's error code, or 0.
static int bs_set_decay(long long dirty_ms, long long muzzy_ms) {
	ssize_t dirty = dirty_ms, muzzy = muzzy_ms;
	int err;
	if ((err = duckdb_je_mallctl("arenas.dirty_decay_ms", NULL, NULL, &dirty, sizeof(dirty))) != 0) return err;
	if ((err = duckdb_je_mallctl("arenas.muzzy_decay_ms", NULL, NULL, &muzzy, sizeof(muzzy))) != 0) return err;
	unsigned n = 0;
	size_t len = sizeof(n);
	if ((err = duckdb_je_mallctl("arenas.narenas", &n, &len, NULL, 0)) != 0) return err;
	char name[64];
	for (unsigned i = 0; i < n; i++) {
		// an arena not yet created fails with EFAULT: it will take the defaults above
		snprintf(name, sizeof(name), "arena.%u.dirty_decay_ms", i);
		duckdb_je_mallctl(name, NULL, NULL, &dirty, sizeof(dirty));
		snprintf(name, sizeof(name), "arena.%u.muzzy_decay_ms", i);
		duckdb_je_mallctl(name, NULL, NULL, &muzzy, sizeof(muzzy));
	}
	_Bool on = 1;
	return duckdb_je_mallctl("background_thread", NULL, NULL, &on, sizeof(on));
}

// bs_decay reads how long an arena keeps freed pages (name: a decay_ms control).
static int bs_decay(const char *name, long long *ms) {
	ssize_t v = -2;
	size_t len = sizeof(v);
	int err = duckdb_je_mallctl(name, &v, &len, NULL, 0);
	*ms = v;
	return err;
}

// bs_stats refreshes jemalloc's statistics and reads the process-wide totals, in bytes:
// out[0..4] = stats.allocated, active, resident, mapped, retained; *arenas = arenas.narenas.
static int bs_stats(size_t out[5], unsigned *arenas) {
	uint64_t epoch = 1;
	size_t len = sizeof(epoch);
	int err;
	if ((err = duckdb_je_mallctl("epoch", &epoch, &len, &epoch, len)) != 0) return err;
	const char *names[5] = {"stats.allocated", "stats.active", "stats.resident", "stats.mapped", "stats.retained"};
	for (int i = 0; i < 5; i++) {
		len = sizeof(size_t);
		if ((err = duckdb_je_mallctl(names[i], &out[i], &len, NULL, 0)) != 0) return err;
	}
	len = sizeof(*arenas);
	return duckdb_je_mallctl("arenas.narenas", arenas, &len, NULL, 0);
}

// bs_trim hands the free memory of glibc's malloc arenas back to the kernel; 1 if it could.
static int bs_trim(void) {
#ifdef __GLIBC__
	malloc_trim(0);
	return 1;
#else
	return 0;
#endif
}

static int bs_background(_Bool *on) {
	size_t len = sizeof(*on);
	return duckdb_je_mallctl("background_thread", on, &len, NULL, 0);
}
*/
import "C"

import (
	"fmt"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"
)

// freedPagesDecayMs is how long jemalloc keeps a freed page before it returns it to the kernel.
const freedPagesDecayMs = 100

// releaseFreedMemory makes DuckDB's allocator return freed memory to the kernel within
// freedPagesDecayMs, in the whole process (every DuckDB handle shares the allocator).
//
// DuckDB allocates through the jemalloc it links, set to keep freed pages for a second, then
// hand them back lazily (MADV_FREE: still resident until the kernel wants them), and only when
// an arena is next busy enough; arenas belong to whichever OS threads Go's cgo calls run on. A
// sync frees a lot: each merge drops its staged batch and temp tables, and DuckDB's buffer
// manager frees the blocks it spills: those pages stay resident, beyond what DuckDB tracks and
// Go maps, after DuckDB's tracked memory fell. Returning pages at once costs CPU (pages fault in
// again); a short decay with jemalloc's background threads doing the purging keeps the peak
// about as low without that cost. DuckDB's own settings alone do not reach it
// (allocator_background_threads, the flush thresholds), and jemalloc reads its options (DUCKDB_JE_MALLOC_CONF) only when the process
// starts, so the decay is set through jemalloc's control interface.
var releaseFreedMemory = sync.OnceValue(func() error {
	if rc := C.bs_set_decay(C.longlong(freedPagesDecayMs), 0); rc != 0 {
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

// freedMemoryBackground reads whether jemalloc's background threads run.
func freedMemoryBackground() (bool, error) {
	var on C._Bool
	if rc := C.bs_background(&on); rc != 0 {
		return false, fmt.Errorf("jemalloc background_thread: error %d", int(rc))
	}
	return bool(on), nil
}

// AllocatorStats is what DuckDB's allocator (the jemalloc it links) holds, process-wide, in
// bytes: Allocated by live allocations, Active in pages those occupy, Resident in pages it maps
// and has touched (freed pages not yet handed back included), Mapped in its extents, Retained
// in address space handed back to the kernel but kept mapped. Arenas is how many arenas exist.
type AllocatorStats struct {
	Allocated, Active, Resident, Mapped, Retained int64
	Arenas                                        int
}

// ReadAllocatorStats reads AllocatorStats: a diagnostic, for benchmarks.
func ReadAllocatorStats() (AllocatorStats, error) {
	var out [5]C.size_t
	var arenas C.unsigned
	if rc := C.bs_stats(&out[0], &arenas); rc != 0 {
		return AllocatorStats{}, fmt.Errorf("jemalloc stats: error %d", int(rc))
	}
	return AllocatorStats{Allocated: int64(out[0]), Active: int64(out[1]), Resident: int64(out[2]), Mapped: int64(out[3]),
		Retained: int64(out[4]), Arenas: int(arenas)}, nil
}

// trims counts the malloc_trim calls ReturnFreedCMemory made (for its test).
var trims atomic.Int64

// TrimFreedCMemory hands the free memory of the C library's malloc back to the kernel once, as
// ReturnFreedCMemory does on its interval; false where it could not (not glibc).
func TrimFreedCMemory() bool {
	if C.bs_trim() != 1 {
		return false
	}
	trims.Add(1)
	return true
}

// ReturnFreedCMemory hands the free memory of the C library's malloc back to the kernel every
// interval until stop is called (a no-op where the C library is not glibc). DuckDB allocates
// much outside its jemalloc, through plain malloc (C++ containers and strings), and glibc keeps
// what is freed in per-thread arenas; cgo calls run on many threads, so during a large sync
// those arenas hold tens of MB free and resident beyond what Go and jemalloc hold.
func ReturnFreedCMemory(interval time.Duration) (stop func()) {
	done, finished := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				TrimFreedCMemory()
			}
		}
	}()
	return sync.OnceFunc(func() { close(done); <-finished })
}
