package main

/*
#include <stdlib.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

// bs_mallinfo reads what glibc's malloc holds, in bytes, over all its arenas: out[0] in the
// arenas' heaps, out[1] in mmapped chunks, out[2] allocated, out[3] free (zeros elsewhere).
static void bs_mallinfo(size_t out[4]) {
	out[0] = out[1] = out[2] = out[3] = 0;
#ifdef __GLIBC__
	struct mallinfo2 m = mallinfo2();
	out[0] = m.arena;
	out[1] = m.hblkhd;
	out[2] = m.uordblks;
	out[3] = m.fordblks;
#endif
}
*/
import "C"

// cMalloc is what glibc's malloc holds (DuckDB's C++ containers, strings and the like allocate
// there, not through its jemalloc): in use, and free but kept by its arenas.
func cMalloc() (inUse, free int64) {
	var out [4]C.size_t
	C.bs_mallinfo(&out[0])
	return int64(out[1] + out[2]), int64(out[3])
}
