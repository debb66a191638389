package report

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/billsync/billsync/internal/config"
)

// BenchmarkSheetRows1M writes the rows of the two largest sheets at 1M records (aging's detail,
// collections' closed and unpaid items), read from the warehouse once, as the report writes them:
// the workbook's XML cells, their deflate, the CSV and the totals. It measures the per-cell cost
// on billsync's side alone, without DuckDB's query or the driver's conversion.
func BenchmarkSheetRows1M(b *testing.B) {
	db := benchWarehouse(b)
	for _, q := range []string{"aging/aging_detail.sql", "collections/collections_closed_unpaid.sql"} {
		name, file, _ := strings.Cut(q, "/")
		s, sh, cols, rows := loadSheetRows(b, db, name, file)
		b.Run(strings.TrimSuffix(file, ".sql"), func(b *testing.B) {
			cells := int64(len(rows) * len(cols))
			b.ReportAllocs()
			for range b.N {
				wb, err := newWorkbook(s)
				if err != nil {
					b.Fatal(err)
				}
				x := wb.dataSheet(sh.tab(s.Locale), cols)
				cs, err := newCSVSheet(filepath.Join(b.TempDir(), "rows.csv"), cols, s.loc, s.lang, nil)
				if err != nil {
					b.Fatal(err)
				}
				tot := newTotals(cols)
				tot.watch(sh)
				for _, r := range rows {
					tot.add(r)
					if err := x.write(r); err != nil {
						b.Fatal(err)
					}
					if err := cs.write(r); err != nil {
						b.Fatal(err)
					}
				}
				if _, err := x.done(sh, tot); err != nil {
					b.Fatal(err)
				}
				if err := x.rows.Flush(); err != nil {
					b.Fatal(err)
				}
				if err := cs.finish(); err != nil {
					b.Fatal(err)
				}
				wb.close()
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(int64(b.N)*cells), "ns/cell")
		})
	}
}

// loadSheetRows reads one sheet's rows at the benchmark's date, in the order and columns its
// workbook sheet and CSV have.
func loadSheetRows(b *testing.B, db, report, file string) (*settings, *Sheet, []column, [][]any) {
	b.Helper()
	ctx := context.Background()
	defs, err := selectReports([]string{report})
	if err != nil {
		b.Fatal(err)
	}
	d := defs[0]
	i := slices.IndexFunc(d.Sheets, func(sh Sheet) bool { return sh.Query == file })
	if i < 0 {
		b.Fatalf("%s has no sheet of %s", report, file)
	}
	sh := &d.Sheets[i]
	s, err := Options{Report: config.Report{ReportsOut: b.TempDir()}, DB: db, AsOf: benchAsOf, Log: quiet}.resolve()
	if err != nil {
		b.Fatal(err)
	}
	h, err := openWarehouse(ctx, s.DB)
	if err != nil {
		b.Fatal(err)
	}
	defer h.Close()
	if err := s.proveZone(ctx, h); err != nil {
		b.Fatal(err)
	}
	conn, err := h.Conn(ctx)
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close()
	if err := prepareConn(ctx, conn, false); err != nil {
		b.Fatal(err)
	}
	vals, err := setReportVars(ctx, conn, s, d)
	if err != nil {
		b.Fatal(err)
	}
	var cols []column
	var rows [][]any
	start := func(res result) error {
		cols = resolveColumns(sh, res, vals, s.Locale, "account")
		return nil
	}
	err = stream(ctx, conn, file, start, func(row []any) error {
		view := make([]any, len(cols))
		pick(cols, row, view)
		rows = append(rows, view)
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	return s, sh, cols, rows
}
