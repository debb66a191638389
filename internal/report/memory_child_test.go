package report

import (
	"context"
	"errors"
	"fmt"
	"os"
	"regexp"
	"strconv"
)

// releaseChild is TestReleaseReturnsDuckDBMemory's child: it prints the
// resident MB before a query that needs a lot of memory, after it, and after
// release.
func releaseChild() error {
	ctx := context.Background()
	db, err := openWarehouse(ctx, os.Getenv("BILLSYNC_REPORT_CHILD_DB"))
	if err != nil {
		return err
	}
	defer db.Close()
	mem, err := newNativeMemory(ctx, db, quiet)
	if err != nil {
		return err
	}
	before, err := rssMB()
	if err != nil {
		return err
	}
	var n int64
	// A hash aggregate of 1M strings: about 80 MB while it runs, nothing after.
	if err := db.QueryRowContext(ctx, "SELECT count(DISTINCT i::VARCHAR) FROM range(1000000) t(i)").Scan(&n); err != nil {
		return err
	}
	held, err := rssMB()
	if err != nil {
		return err
	}
	mem.release(ctx)
	after, err := rssMB()
	if err != nil {
		return err
	}
	fmt.Printf("release: %d %d %d\n", before, held, after)
	return nil
}

func rssMB() (int, error) {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, err
	}
	m := regexp.MustCompile(`VmRSS:\s+(\d+) kB`).FindSubmatch(b)
	if m == nil {
		return 0, errors.New("no VmRSS in /proc/self/status")
	}
	kb, err := strconv.Atoi(string(m[1]))
	return kb / 1024, err
}
