package warehouse

import (
	"context"
	"time"
)

// MemorySample is DuckDB's own account of its memory at one moment of a build: what its buffer
// manager tracks, by tag (duckdb_memory()), and what it has spilled to the temp directory.
// Memory DuckDB allocates outside its buffer manager, and what its allocator keeps after a
// free, appear in the process's RSS only; a caller compares the two.
type MemorySample struct {
	At      time.Time
	Tags    map[string]int64 // memory_usage_bytes by tag, tags in use only
	Tracked int64            // their sum
	Spilled int64            // temporary_storage_bytes, all tags
}

const memoryQuery = `SELECT tag, memory_usage_bytes, temporary_storage_bytes FROM duckdb_memory()`

// traceMemory calls fn with a sample every interval until the returned stop is called. A sample
// that fails (the build closing) is skipped.
func (b *Build) traceMemory(every time.Duration, fn func(MemorySample)) (stop func()) {
	done, finished := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				if s, err := b.sampleMemory(context.Background()); err == nil {
					fn(s)
				}
			}
		}
	}()
	return func() { close(done); <-finished }
}

func (b *Build) sampleMemory(ctx context.Context) (MemorySample, error) {
	s := MemorySample{At: time.Now(), Tags: map[string]int64{}}
	rows, err := b.db.QueryContext(ctx, memoryQuery)
	if err != nil {
		return s, err
	}
	defer rows.Close()
	for rows.Next() {
		var tag string
		var used, temp int64
		if err := rows.Scan(&tag, &used, &temp); err != nil {
			return s, err
		}
		if used > 0 {
			s.Tags[tag] = used
		}
		s.Tracked += used
		s.Spilled += temp
	}
	return s, rows.Err()
}
