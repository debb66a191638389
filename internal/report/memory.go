package report

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"
)

// nativeMemory hands the memory DuckDB freed back to the system. DuckDB's
// allocator (jemalloc) keeps what a finished query freed for later
// allocations and, without allocator activity, does not return it, so a
// run's peak grows towards the sum of its queries' peaks instead of the
// largest one. Setting memory_limit, even to the value it has, makes DuckDB
// 1.5 purge those pages (about 10 ms; 220 MB resident fell to 77 MB after
// the aging_by_customer query at 1M records). allocator_background_threads
// purges too, but over seconds: no lower peak in the benchmark.
type nativeMemory struct {
	db    *sql.DB
	limit string
	log   *slog.Logger
}

func newNativeMemory(ctx context.Context, db *sql.DB, log *slog.Logger) (*nativeMemory, error) {
	m := &nativeMemory{db: db, log: log}
	if err := db.QueryRowContext(ctx, "SELECT current_setting('memory_limit')").Scan(&m.limit); err != nil {
		return nil, fmt.Errorf("read memory_limit: %w", err)
	}
	return m, nil
}

// release runs on a connection of its own, so a result open on another one is
// untouched. A failure only costs memory, so it is logged, not returned.
func (m *nativeMemory) release(ctx context.Context) {
	if _, err := m.db.ExecContext(ctx, "SET memory_limit = "+sqlString(m.limit)); err != nil {
		m.log.Warn("could not release DuckDB's free memory", "err", err)
	}
}

// reportGCPercent is the Go GC target while reports are written: +50%
// instead of +100% keeps the garbage of the cell values from doubling the
// heap while DuckDB holds a large result. It was 25 while excelize's stream
// buffers were most of the heap; with the rows deflated as written the heap
// is small and every row allocates, so at 25 the six reports at 1M records
// ran about 110 collections and spent 6.4-7.1 CPU-s, at 50 about 55 and
// 5.6-6.4 CPU-s (at 100: 28, 5.8-6.4 CPU-s), at the same peak RSS.
const reportGCPercent = 50
