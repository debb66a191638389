package lake_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/billsync/billsync/internal/config"
	"github.com/billsync/billsync/internal/lake"
	"github.com/billsync/billsync/internal/warehouse"
)

// The read benchmark's settings: benchDBEnv names a warehouse file of about 1M records to
// commit (the report benchmark's synthetic one: BILLSYNC_REPORT_BENCH_DB=FILE go test -run '^$'
// -bench XLSX ./internal/report/ builds it), benchLakeEnv a directory the lake is kept in
// between runs (committed once), readChildEnv marks the child that reads.
const (
	benchDBEnv   = "BILLSYNC_LAKE_BENCH_DB"
	benchLakeEnv = "BILLSYNC_LAKE_BENCH_DIR"
	readChildEnv = "BILLSYNC_LAKE_READ_CHILD"
)

// BenchmarkMaterialize1M reads a ~1M-record account's snapshot back into a warehouse file, in
// a child process whose peak RSS (VmHWM) it reports: what report -lake adds before the reports
// (whose own peak is docs/performance.md's). The commit, once per lake directory, is timed and
// logged.
func BenchmarkMaterialize1M(b *testing.B) {
	src := os.Getenv(benchDBEnv)
	if src == "" {
		b.Skipf("set %s to a warehouse file of about 1M records (docs/lake.md, \"Bounded memory\")", benchDBEnv)
	}
	dir := os.Getenv(benchLakeEnv)
	if dir == "" {
		dir = b.TempDir()
	}
	cfg := config.Lake{LakeAccess: config.LakeAccess{Root: "file://" + filepath.Join(dir, "warehouse"), Catalog: "sqlite://" + filepath.Join(dir, "catalog.db"), Namespace: "billsync"}}
	ctx := context.Background()
	lk, err := lake.Open(ctx, cfg, nil)
	if err != nil {
		b.Fatal(err)
	}
	start := time.Now()
	res, err := lk.Commit(ctx, src, []string{"bench"})
	if err != nil {
		b.Fatal(err)
	}
	if n, _ := res.Snapshots(); n > 0 {
		files, size := lakeSize(nil, filepath.Join(dir, "warehouse"))
		b.Logf("committed %d snapshots in %s: lake %d files, %.1f MB", n, time.Since(start).Round(time.Millisecond), files, float64(size)/1e6)
	}
	for b.Loop() {
		cmd := exec.Command(os.Args[0], "-test.run=^TestReadChild$")
		cmd.Env = append(os.Environ(), readChildEnv+"="+dir)
		t0 := time.Now()
		out, err := cmd.CombinedOutput()
		if err != nil {
			b.Fatalf("%v\n%s", err, out)
		}
		b.ReportMetric(time.Since(t0).Seconds(), "wall_s")
		b.ReportMetric((cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()).Seconds(), "cpu_s")
		m := regexp.MustCompile(`read (\d+) rows, VmHWM: (\d+) kB`).FindSubmatch(out)
		if m == nil {
			b.Fatalf("the child printed no peak:\n%s", out)
		}
		kb, _ := strconv.Atoi(string(m[2]))
		b.ReportMetric(float64(kb)/1024, "peak_RSS_MB")
		rows, _ := strconv.ParseFloat(string(m[1]), 64)
		b.ReportMetric(rows, "rows")
	}
}

// TestReadChild is BenchmarkMaterialize1M's child: it reads the account bench of the lake in
// readChildEnv's directory into a warehouse file (the build's default memory limit, as
// report -lake runs it) and prints the rows and its peak RSS. Without the variable it is not
// a child and has nothing to do.
func TestReadChild(t *testing.T) {
	dir := os.Getenv(readChildEnv)
	if dir == "" {
		t.Skip("BenchmarkMaterialize1M's child")
	}
	cfg := config.Lake{LakeAccess: config.LakeAccess{Root: "file://" + filepath.Join(dir, "warehouse"), Catalog: "sqlite://" + filepath.Join(dir, "catalog.db"), Namespace: "billsync"}}
	ctx := context.Background()
	lk, err := lake.Open(ctx, cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	read, err := lk.Materialize(ctx, lake.At{}, "bench", filepath.Join(t.TempDir(), "read.duckdb"), warehouse.BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var rows int64
	for _, tr := range read.Tables {
		rows += tr.Rows
	}
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`VmHWM:\s+(\d+) kB`).FindSubmatch(status)
	if m == nil {
		t.Fatal("no VmHWM")
	}
	fmt.Printf("read %d rows, VmHWM: %s kB\n", rows, m[1])
}
