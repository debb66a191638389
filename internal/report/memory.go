package report

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"

	"github.com/billsync/billsync/internal/duckfile"
)

// nativeMemory hands the memory DuckDB freed back to the system. DuckDB's
// allocator (jemalloc) keeps what a finished query freed for later
// allocations and, without allocator activity, does not return it, so a
// run's peak grows towards the sum of its queries' peaks instead of the
// largest one. Setting memory_limit, even to the value it has, makes DuckDB
// 1.5 purge those pages at once; allocator_background_threads purges too,
// but over seconds (docs/reports.md, "How the reports stay fast and small").
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
// untouched. A failure only costs memory, so it is logged, not returned. DuckDB also
// allocates through plain malloc, whose per-thread arenas keep what a query freed; the more
// threads ran at once (a loaded machine), the more arenas, so those are trimmed too.
func (m *nativeMemory) release(ctx context.Context) {
	if _, err := m.db.ExecContext(ctx, "SET memory_limit = "+duckfile.QuoteLiteral(m.limit)); err != nil {
		m.log.Warn("could not release DuckDB's free memory", "err", err)
	}
	duckfile.TrimFreedCMemory()
}

// reportGCPercent is the Go GC target while reports are written: +50%
// instead of +100% keeps the garbage of the cell values from doubling the
// heap while DuckDB holds a large result. With the rows deflated as written
// the heap is small and every row allocates, so a lower target only adds
// collections at the same peak RSS (docs/reports.md, "How the reports stay fast and small").
const reportGCPercent = 50
