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

	"github.com/billsync/billsync/internal/entity"
	"github.com/billsync/billsync/internal/syncdata"
)

// invoiceRecord builds an invoice list item shaped like the API's (about 540 bytes).
// appendInvoice appends the i-th synthetic invoice record to buf. It avoids fmt so that
// the benchmarks measure the loader, not the generator.
func appendInvoice(buf []byte, i int, status string) []byte {
	c := int64(i % 50000)
	buf = append(buf, `{"id":"inv-`...)
	buf = appendPadded(buf, int64(i), 8)
	buf = append(buf, `-4d8a-bf14-afbd738eb682","amount":`...)
	buf = strconv.AppendInt(buf, int64(1000*(i%5000+1)), 10)
	buf = append(buf, `,"category":null,"createdAt":`...)
	buf = strconv.AppendInt(buf, 1691046324713+int64(i)*1000, 10)
	buf = append(buf, `,"description":"","link":"l`...)
	buf = appendPadded(buf, int64(i), 7)
	buf = append(buf, `","type":"invoice","status":"`...)
	buf = append(buf, status...)
	buf = append(buf, `","name":"INVOICE `...)
	buf = strconv.AppendInt(buf, int64(i), 10)
	buf = append(buf, `","redirectUrl":null,"customerId":"cus-`...)
	buf = appendPadded(buf, c, 6)
	buf = append(buf, `-6bab-42c8-92be-72f3a9fd4c33","transactions":[{"id":"tx-`...)
	buf = appendPadded(buf, int64(i), 8)
	buf = append(buf, `-6dbb-4e26-aec5-8c4b5f5e13a2","status":"created"}],"customer":{"id":"cus-`...)
	buf = appendPadded(buf, c, 6)
	buf = append(buf, `-6bab-42c8-92be-72f3a9fd4c33","email":"c`...)
	buf = strconv.AppendInt(buf, c, 10)
	buf = append(buf, `@example.com","mobile":"0813`...)
	buf = appendPadded(buf, c, 7)
	buf = append(buf, `","name":"Customer `...)
	buf = strconv.AppendInt(buf, c, 10)
	return append(buf, `"}}`...)
}

func appendPadded(buf []byte, n int64, width int) []byte {
	var digits [20]byte
	d := strconv.AppendInt(digits[:0], n, 10)
	for range width - len(d) {
		buf = append(buf, '0')
	}
	return append(buf, d...)
}

func stageInvoices(b *testing.B, build *Build, run syncdata.Run, n int, at time.Time) *loader {
	return stageInvoicesChanged(b, build, run, n, at, 0)
}

// stageInvoicesChanged stages n invoices of which every changeEvery-th (none when 0) is
// closed instead of paid.
func stageInvoicesChanged(b *testing.B, build *Build, run syncdata.Run, n int, at time.Time, changeEvery int) *loader {
	l, err := build.newLoader(context.Background(), entity.Invoices, run.ID, run.Account, at)
	if err != nil {
		b.Fatal(err)
	}
	var buf []byte
	for i := range n {
		status := "paid"
		if changeEvery > 0 && i%changeEvery == 0 {
			status = "closed"
		}
		buf = appendInvoice(buf[:0], i, status)
		if err := l.Add(1+i/100, i%100, buf); err != nil {
			b.Fatal(err)
		}
	}
	return l
}

// benchRecords is a benchmark's record count: full, or a hundredth of it with -short. make test
// runs every benchmark once with -short to prove each still runs; the figures come from make bench.
func benchRecords(full int) int {
	if testing.Short() {
		return full / 100
	}
	return full
}

// BenchmarkLoadInvoices1M stages and merges 1M invoice-like records into a new
// file, then re-merges the same 1M (the steady-state nightly cost).
func BenchmarkLoadInvoices1M(b *testing.B) {
	n := benchRecords(1_000_000)
	for range b.N {
		b.StopTimer()
		path := fmt.Sprintf("%s/bench.duckdb", b.TempDir())
		build, err := StartBuild(context.Background(), path, BuildOptions{Log: benchLog()})
		if err != nil {
			b.Fatal(err)
		}
		run, _ := build.startRun(context.Background(), "acct", t0)
		b.StartTimer()

		start := time.Now()
		l := stageInvoices(b, build, run, n, t0)
		staged := time.Since(start)
		if _, err := l.Merge(context.Background()); err != nil {
			b.Fatal(err)
		}
		first := time.Since(start)

		run2 := run
		start = time.Now()
		l = stageInvoices(b, build, run2, n, t0.Add(time.Hour))
		res, err := l.Merge(context.Background())
		if err != nil {
			b.Fatal(err)
		}
		if _, err := build.markDeleted(context.Background(), entity.Invoices, run2.Account, run2.ID, t0.Add(time.Hour)); err != nil {
			b.Fatal(err)
		}
		again := time.Since(start)
		if res.Unchanged != int64(n) {
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

// BenchmarkRemergeInvoices1MOnePercent is the realistic nightly run: the next
// run sees the same 1M invoices with 1% of them changed (paid -> closed, and
// their transaction) and merges them as a full list.
func BenchmarkRemergeInvoices1MOnePercent(b *testing.B) {
	n := benchRecords(1_000_000)
	ctx := context.Background()
	for range b.N {
		b.StopTimer()
		build, err := StartBuild(ctx, fmt.Sprintf("%s/bench.duckdb", b.TempDir()), BuildOptions{Log: benchLog()})
		if err != nil {
			b.Fatal(err)
		}
		run, _ := build.startRun(ctx, "acct", t0)
		if _, err := stageInvoices(b, build, run, n, t0).Merge(ctx); err != nil {
			b.Fatal(err)
		}
		if err := build.finishRun(ctx, run.ID, syncdata.RunStats{Status: "succeeded"}); err != nil {
			b.Fatal(err)
		}
		next, _ := build.startRun(ctx, "acct", t0.Add(24*time.Hour))
		b.StartTimer()

		start := time.Now()
		res, err := stageInvoicesChanged(b, build, next, n, t0.Add(24*time.Hour), 100).Merge(ctx)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := build.markDeleted(ctx, entity.Invoices, next.Account, next.ID, t0.Add(24*time.Hour)); err != nil {
			b.Fatal(err)
		}
		took := time.Since(start)
		if res.Updated != int64(n/100) || res.Unchanged != int64(n-n/100) {
			b.Fatalf("re-merge: %+v", res)
		}
		b.ReportMetric(float64(n)/took.Seconds(), "remerge_rows/s")
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
