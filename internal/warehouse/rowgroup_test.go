package warehouse

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/billsync/billsync/internal/entity"
	"github.com/billsync/billsync/internal/syncdata"
)

// rowGroupRows is the rows of each of table's row groups in the file db has open, in order.
func rowGroupRows(t *testing.T, db *sql.DB, table string) []int {
	t.Helper()
	rows, err := db.Query(`SELECT row_group_id, sum(count) FROM pragma_storage_info('` + table + `')
		WHERE column_id = 0 AND segment_type <> 'VALIDITY' GROUP BY ALL ORDER BY 1`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []int
	for rows.Next() {
		var id, n int
		if err := rows.Scan(&id, &n); err != nil {
			t.Fatal(err)
		}
		out = append(out, n)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// syncCustomers publishes one run that reads customers 0..n-1 whole, in pages of 100.
func syncCustomers(t *testing.T, path string, at time.Time, n int) {
	t.Helper()
	ctx := context.Background()
	b, err := StartBuild(ctx, path, BuildOptions{Log: quietLog})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if !b.done {
			b.Close()
		}
	}()
	s := startSink(t, b, "acct", at)
	li, err := s.List(entity.Customers)
	if err != nil {
		t.Fatal(err)
	}
	for first, page := 0, 1; first < n; first, page = first+100, page+1 {
		var items []json.RawMessage
		for i := first; i < min(n, first+100); i++ {
			items = append(items, json.RawMessage(fmt.Sprintf(`{"id":"c%06d","createdAt":1700000000000,"email":"c%d@example.com"}`, i, i)))
		}
		if err := li.Add(ctx, page, items); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := li.EndPass(ctx, syncdata.ListEnd{Stream: "customers", Expected: int64(n), Stable: true}); err != nil {
		t.Fatal(err)
	}
	if err := li.Finish(ctx); err != nil {
		t.Fatal(err)
	}
	if err := s.FinishRun(ctx, syncdata.RunStats{Status: "succeeded"}); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if err := b.Publish(ctx); err != nil {
		t.Fatal(err)
	}
}

// The published warehouse is written in row groups of DefaultRowGroupSize, by the first sync and
// by a nightly one, which works on a copy of the published file: DuckDB does not keep the size in
// the file, and a build that opened its copy plainly would write its default and merge the rows
// it touches into row groups of that size.
func TestBuildWritesRowGroupSize(t *testing.T) {
	path := newPath(t)
	n := 2*DefaultRowGroupSize + 1000
	check := func(want []int) {
		t.Helper()
		db, err := OpenReadOnly(context.Background(), path)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		if got := rowGroupRows(t, db, "customers"); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("after the first sync, customers has row groups of %v rows, want %v", got, want)
		}
	}
	syncCustomers(t, path, t0, n)
	check([]int{DefaultRowGroupSize, DefaultRowGroupSize, 1000})

	// the next night: every customer again, and 2,000 new ones (appended in a row group of their own)
	syncCustomers(t, path, t0.Add(24*time.Hour), n+2000)
	db, err := OpenReadOnly(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	got := rowGroupRows(t, db, "customers")
	sum := 0
	for _, r := range got {
		sum += r
		if r > DefaultRowGroupSize {
			t.Errorf("after the nightly sync, customers has a row group of %d rows (%v), want at most %d",
				r, got, DefaultRowGroupSize)
		}
	}
	if sum != n+2000 {
		t.Errorf("after the nightly sync, customers holds %d rows, want %d", sum, n+2000)
	}
}

// A list batch is one whole row group of the build: a build with smaller row groups merges
// smaller batches, split inside a page at the row group's bound.
func TestListBatchIsARowGroup(t *testing.T) {
	ctx := context.Background()
	b, err := StartBuild(ctx, newPath(t), BuildOptions{Log: quietLog, RowGroupSize: 2048})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	s := startSink(t, b, "acct", t0)
	li, err := s.List(entity.Customers)
	if err != nil {
		t.Fatal(err)
	}
	var page []json.RawMessage
	for i := range 2100 {
		created := `1700000000000`
		if i == 2050 {
			created = `"nope"`
		}
		page = append(page, json.RawMessage(fmt.Sprintf(`{"id":"p%04d","createdAt":%s}`, i, created)))
	}
	err = li.Add(ctx, 1, page)
	if err == nil {
		err = li.Finish(ctx)
	}
	if err == nil || !strings.Contains(err.Error(), "customers page 1 item 2050 (id p2050): createdAt") {
		t.Fatalf("error %v, want the bad record located as page 1 item 2050", err)
	}
	if _, err := b.DB().Exec("CHECKPOINT"); err != nil {
		t.Fatal(err)
	}
	// the first batch (items 0-2047) merged, in one row group; the second failed whole
	if got := rowGroupRows(t, b.DB(), "customers"); fmt.Sprint(got) != "[2048]" {
		t.Errorf("customers has row groups of %v rows, want [2048]: one batch of 2,048 records", got)
	}
}

// A row group size DuckDB would refuse is refused before anything is opened.
func TestBuildRowGroupSizeChecked(t *testing.T) {
	path := newPath(t)
	if _, err := StartBuild(context.Background(), path, BuildOptions{Log: quietLog, RowGroupSize: 1000}); err == nil ||
		!strings.Contains(err.Error(), "row group size 1000") {
		t.Fatalf("error %v, want the row group size named", err)
	}
	// the lock was released: a valid build starts
	startBuild(t, path)
}

// Once the table holds the account's rows from an earlier run, a list's merges compare each
// record with the stored one and its batches are larger than a row group: the same page that
// a first sync merges in part (TestListBatchIsARowGroup) is one batch on the next run.
func TestRelistBatchIsLarger(t *testing.T) {
	ctx := context.Background()
	b, err := StartBuild(ctx, newPath(t), BuildOptions{Log: quietLog, RowGroupSize: 2048})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	page := func(prefix string, bad int) []json.RawMessage {
		var out []json.RawMessage
		for i := range 2100 {
			created := `1700000000000`
			if i == bad {
				created = `"nope"`
			}
			out = append(out, json.RawMessage(fmt.Sprintf(`{"id":"%s%04d","createdAt":%s}`, prefix, i, created)))
		}
		return out
	}
	s1 := startSink(t, b, "acct", t0)
	li, err := s1.List(entity.Customers)
	if err != nil {
		t.Fatal(err)
	}
	if err := li.Add(ctx, 1, page("p", -1)); err != nil {
		t.Fatal(err)
	}
	if err := li.Finish(ctx); err != nil {
		t.Fatal(err)
	}
	if err := s1.FinishRun(ctx, syncdata.RunStats{Status: "succeeded"}); err != nil {
		t.Fatal(err)
	}
	s1.Close()

	s2 := startSink(t, b, "acct", t0.Add(24*time.Hour))
	li, err = s2.List(entity.Customers)
	if err != nil {
		t.Fatal(err)
	}
	err = li.Add(ctx, 1, page("q", 2050))
	if err == nil {
		err = li.Finish(ctx)
	}
	if err == nil || !strings.Contains(err.Error(), "customers page 1 item 2050 (id q2050): createdAt") {
		t.Fatalf("error %v, want the bad record located as page 1 item 2050", err)
	}
	if got := queryString(t, b.DB(), `SELECT count(*) FROM customers WHERE id LIKE 'q%'`); got != "0" {
		t.Errorf("%s records of the failed page stored, want 0: the page is one batch on the second run", got)
	}
}
