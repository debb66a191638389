package warehouse

import (
	"bufio"
	"context"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

// invoiceRecord builds an invoice list item shaped like the API's (about 500 bytes).
func invoiceRecord(i int, status string) []byte {
	return fmt.Appendf(nil, `{"id":"inv-%08d-4d8a-bf14-afbd738eb682","amount":%d,"category":null,"createdAt":%d,`+
		`"description":"","link":"l%07d","type":"invoice","status":"%s","name":"INVOICE %d","redirectUrl":null,`+
		`"customerId":"cus-%06d-6bab-42c8-92be-72f3a9fd4c33","transactions":[{"id":"tx-%08d-6dbb-4e26-aec5-8c4b5f5e13a2","status":"created"}],`+
		`"customer":{"id":"cus-%06d-6bab-42c8-92be-72f3a9fd4c33","email":"c%d@example.com","mobile":"0813%07d","name":"Customer %d"}}`,
		i, 1000*(i%5000+1), 1691046324713+int64(i)*1000, i, status, i, i%50000, i, i%50000, i%50000, i, i%50000)
}

func stageInvoices(b *testing.B, build *Build, run Run, n int, at time.Time) *Loader {
	l, err := build.NewLoader(context.Background(), Invoices, run.ID, run.Account, at)
	if err != nil {
		b.Fatal(err)
	}
	for i := range n {
		if err := l.Add(1+i/100, i%100, invoiceRecord(i, "paid")); err != nil {
			b.Fatal(err)
		}
	}
	return l
}

// BenchmarkLoadInvoices1M stages and merges 1M invoice-like records into a new
// file, then re-merges the same 1M (the steady-state nightly cost).
func BenchmarkLoadInvoices1M(b *testing.B) {
	const n = 1_000_000
	for range b.N {
		b.StopTimer()
		path := fmt.Sprintf("%s/bench.duckdb", b.TempDir())
		build, err := StartBuild(context.Background(), path, benchLog())
		if err != nil {
			b.Fatal(err)
		}
		run, _ := build.StartRun(context.Background(), "acct", t0)
		b.StartTimer()

		start := time.Now()
		l := stageInvoices(b, build, run, n, t0)
		staged := time.Since(start)
		if _, err := l.Merge(context.Background(), true); err != nil {
			b.Fatal(err)
		}
		first := time.Since(start)

		run2 := run
		start = time.Now()
		l = stageInvoices(b, build, run2, n, t0.Add(time.Hour))
		res, err := l.Merge(context.Background(), true)
		if err != nil {
			b.Fatal(err)
		}
		again := time.Since(start)
		if res.Unchanged != n {
			b.Fatalf("re-merge: %+v", res)
		}
		b.ReportMetric(float64(n)/first.Seconds(), "load_rows/s")
		b.ReportMetric(float64(n)/staged.Seconds(), "stage_rows/s")
		b.ReportMetric(float64(n)/again.Seconds(), "remerge_rows/s")
		b.ReportMetric(float64(vmHWM())/1024, "peak_RSS_MB")
		b.StopTimer()
		build.Discard()
	}
}

// vmHWM is the process's peak resident set size in KiB.
func vmHWM() int64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			n, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return n
		}
	}
	return 0
}

// benchLog shows merge step timings when BENCH_LOG=1.
func benchLog() *slog.Logger {
	if os.Getenv("BENCH_LOG") == "" {
		return quietLog
	}
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
}
