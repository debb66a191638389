package warehouse

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/billsync/billsync/internal/entity"
	"github.com/billsync/billsync/internal/logbuf"
)

var mergedPathRe = regexp.MustCompile(`msg=merged entity=(\S+) .* path=(\S+)`)

// mergePaths lists "entity:path" for every merge the log shows, in order.
func mergePaths(log string) []string {
	var out []string
	for _, m := range mergedPathRe.FindAllStringSubmatch(log, -1) {
		out = append(out, m[1]+":"+m[2])
	}
	return out
}

func startLoggedBuild(t *testing.T) (*Build, *logbuf.Buffer) {
	t.Helper()
	var buf logbuf.Buffer
	b, err := StartBuild(context.Background(), newPath(t), BuildOptions{Log: slog.New(slog.NewTextHandler(&buf, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return b, &buf
}

// TestDirectFirstLoad: a first load of a list without child tables takes the one-statement path
// only when nothing needs the longer one; what it cannot prove sends the batch the longer way,
// with the same outcome as before the path existed.
func TestDirectFirstLoad(t *testing.T) {
	type batch struct {
		e       entity.Name
		records []string
	}
	cases := []struct {
		name    string
		batches []batch
		paths   []string // of the merges that succeeded
		err     string   // of the last batch
		rows    string   // customers as id:name, after the batches
	}{
		{name: "valid records", batches: []batch{{entity.Customers, []string{`{"id":"a","name":"A"}`, `{"id":"b","name":"B"}`}}},
			paths: []string{"customers:direct"}, rows: "a:A,b:B"},
		{name: "batches with new ids", batches: []batch{
			{entity.Customers, []string{`{"id":"a","name":"A"}`}}, {entity.Customers, []string{`{"id":"b","name":"B"}`}}},
			paths: []string{"customers:direct", "customers:direct"}, rows: "a:A,b:B"},
		{name: "an id twice in the batch: the later fetch wins", batches: []batch{
			{entity.Customers, []string{`{"id":"a","name":"A"}`, `{"id":"b","name":"B"}`, `{"id":"a","name":"A2"}`}}},
			paths: []string{"customers:first"}, rows: "a:A2,b:B"},
		{name: "the same record twice in the batch", batches: []batch{
			{entity.Customers, []string{`{"id":"a","name":"A"}`, `{"id":"a","name":"A"}`}}},
			paths: []string{"customers:first"}, rows: "a:A"},
		{name: "an id an earlier batch stored", batches: []batch{
			{entity.Customers, []string{`{"id":"a","name":"A"}`}}, {entity.Customers, []string{`{"id":"b","name":"B"}`, `{"id":"a","name":"A2"}`}}},
			paths: []string{"customers:direct", "customers:list"}, rows: "a:A2,b:B"},
		{name: "an id a batch that fell back stored", batches: []batch{
			{entity.Customers, []string{`{"id":"a","name":"A"}`}},
			{entity.Customers, []string{`{"id":"b","name":"B"}`, `{"id":"b","name":"B2"}`}},
			{entity.Customers, []string{`{"id":"c","name":"C"}`, `{"id":"b","name":"B3"}`}},
			{entity.Customers, []string{`{"id":"d","name":"D"}`}}},
			paths: []string{"customers:direct", "customers:first", "customers:list", "customers:direct"}, rows: "a:A,b:B3,c:C,d:D"},
		{name: "an invalid record: every problem named, nothing merged", batches: []batch{
			{entity.Customers, []string{`{"id":"a","createdAt":"soon"}`, `{"name":"no id"}`, `{"id":"c"}`}}},
			err: "customers: 2 invalid records, nothing merged:\n  customers page 1 item 0 (id a): createdAt: \"soon\" is not a timestamp\n  customers page 1 item 1: id: missing"},
		{name: "unreadable JSON", batches: []batch{{entity.Customers, []string{`{"id":"a"}`, `{"id": b}`}}},
			err: "customers page 1 item 1: not a JSON object"},
		{name: "a list with child tables", batches: []batch{{entity.Invoices, []string{`{"id":"i","amount":1}`}}},
			paths: []string{"invoices:first"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b, log := startLoggedBuild(t)
			run := startRun(t, b, "acct")
			var err error
			for _, bt := range c.batches {
				if _, err = tryLoad(b, bt.e, run, t0, false, bt.records...); err != nil {
					break
				}
			}
			switch {
			case c.err == "" && err != nil:
				t.Fatal(err)
			case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
				t.Fatalf("error %v\nwant it to contain %q", err, c.err)
			}
			if got := strings.Join(mergePaths(log.String()), " "); got != strings.Join(c.paths, " ") {
				t.Errorf("paths %q, want %q", got, strings.Join(c.paths, " "))
			}
			got := queryString(t, b.DB(), `SELECT string_agg(id || ':' || coalesce(name, ''), ',' ORDER BY id) FROM customers`)
			if got != c.rows {
				t.Errorf("customers %q, want %q", got, c.rows)
			}
		})
	}
}

// TestDirectPathCoversTheFixtures: every entity that may take the direct path takes it for its
// fixture records (TestProjectionGolden checks the rows): a projection whose error() guard fired
// on valid records would send every first load the longer way and fail nothing else.
func TestDirectPathCoversTheFixtures(t *testing.T) {
	for _, c := range goldenCases(t) {
		if !entityDefs[c.e].direct() {
			continue
		}
		t.Run(string(c.e), func(t *testing.T) {
			b, log := startLoggedBuild(t)
			run := startRun(t, b, "acct")
			res := load(t, b, c.e, run, t0, false, fixtureItems(t, c.file)...)
			if got, want := strings.Join(mergePaths(log.String()), " "), string(c.e)+":direct"; got != want {
				t.Errorf("paths %q, want %q", got, want)
			}
			if n := queryInt(t, b.DB(), "SELECT count(*) FROM "+c.table); res.Inserted != n || n == 0 {
				t.Errorf("inserted %d, table has %d rows", res.Inserted, n)
			}
		})
	}
}

// TestDirectFirstLoadResumed: a run resumed after a kill knows nothing in memory of the ids its
// earlier attempt stored; its direct path reads them from the table, so a batch repeating one
// takes the path that keeps the later fetch.
func TestDirectFirstLoadResumed(t *testing.T) {
	ctx := context.Background()
	path := newPath(t)
	b, err := StartBuild(ctx, path, BuildOptions{Log: quietLog})
	if err != nil {
		t.Fatal(err)
	}
	run := startRun(t, b, "acct")
	load(t, b, entity.Customers, run, t0, false, `{"id":"a","name":"A"}`, `{"id":"b","name":"B"}`)
	if err := b.Close(); err != nil { // interrupted: no publish
		t.Fatal(err)
	}
	var log logbuf.Buffer
	b2, err := StartBuild(ctx, path, BuildOptions{Log: slog.New(slog.NewTextHandler(&log, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer b2.Close()
	again, err := b2.startRun(ctx, "acct", t0)
	if err != nil || again.ID != run.ID {
		t.Fatalf("resumed run %+v, %v; want run %d", again, err, run.ID)
	}
	load(t, b2, entity.Customers, again, t0, false, `{"id":"c","name":"C"}`, `{"id":"a","name":"A2"}`)
	load(t, b2, entity.Customers, again, t0, false, `{"id":"d","name":"D"}`)
	if got, want := strings.Join(mergePaths(log.String()), " "), "customers:list customers:direct"; got != want {
		t.Errorf("paths %q, want %q", got, want)
	}
	got := queryString(t, b2.DB(), `SELECT string_agg(id || ':' || name, ',' ORDER BY id) FROM customers`)
	if want := "a:A2,b:B,c:C,d:D"; got != want {
		t.Errorf("customers %q, want %q", got, want)
	}
}

func TestIDHashesAdd(t *testing.T) {
	cases := []struct {
		name       string
		ids, batch []uint64
		want       []uint64
		fresh      bool
	}{
		{"into nothing", nil, []uint64{3, 1, 2}, []uint64{1, 2, 3}, true},
		{"interleaved", []uint64{2, 4, 6}, []uint64{5, 1, 7, 3}, []uint64{1, 2, 3, 4, 5, 6, 7}, true},
		{"all before", []uint64{5, 6}, []uint64{2, 1}, []uint64{1, 2, 5, 6}, true},
		{"all after", []uint64{1, 2}, []uint64{9, 8}, []uint64{1, 2, 8, 9}, true},
		{"extremes", []uint64{1 << 63}, []uint64{0, ^uint64(0)}, []uint64{0, 1 << 63, ^uint64(0)}, true},
		{"stored already", []uint64{2, 4, 6}, []uint64{5, 4}, []uint64{2, 4, 6}, false},
		{"twice in the batch", []uint64{2, 4, 6}, []uint64{7, 1, 7}, []uint64{2, 4, 6}, false},
		{"empty batch", []uint64{2, 4}, nil, []uint64{2, 4}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, fresh := idHashes(slices.Clone(c.ids)).add(slices.Clone(c.batch))
			if fresh != c.fresh || !slices.Equal(got, c.want) {
				t.Errorf("add(%v, %v) = %v, %v; want %v, %v", c.ids, c.batch, got, fresh, c.want, c.fresh)
			}
		})
	}
}

// TestDirectIDsKeptWhileTheListRuns: a list's id hashes stay in Go while its batches merge and are
// dropped when it finishes, so Go holds the hashes of the lists being read only.
func TestDirectIDsKeptWhileTheListRuns(t *testing.T) {
	ctx := context.Background()
	b := startBuildWith(t, newPath(t), BuildOptions{Log: quietLog, ListBatch: 3})
	s := startSink(t, b, "acct", t0)
	defer s.Close()
	li, err := s.List(entity.Customers)
	if err != nil {
		t.Fatal(err)
	}
	kept := func() int {
		b.mu.Lock()
		defer b.mu.Unlock()
		n := 0
		for _, ids := range b.directIDs {
			n += len(ids)
		}
		return n
	}
	var page []json.RawMessage
	for i := range 7 {
		page = append(page, json.RawMessage(fmt.Sprintf(`{"id":"p%d"}`, i)))
	}
	// the seventh record's batch merges only at Finish, after the first two batches
	if err := li.Add(ctx, 1, page); err != nil {
		t.Fatal(err)
	}
	li.mu.Lock()
	err = li.waitLocked(ctx)
	li.mu.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	if n := kept(); n != 6 {
		t.Errorf("%d id hashes kept after two direct batches, want 6", n)
	}
	if err := li.Finish(ctx); err != nil {
		t.Fatal(err)
	}
	if n := kept(); n != 0 {
		t.Errorf("%d id hashes kept after the list finished", n)
	}
	if n := queryInt(t, b.DB(), `SELECT count(*) FROM customers`); n != 7 {
		t.Errorf("%d customers, want 7", n)
	}
}

// TestLoaderLeavesNoTempObjects: a loader's connection does not go back to the pool holding its
// stage or merge tables (they would hold a batch's memory until the connection's next use).
func TestLoaderLeavesNoTempObjects(t *testing.T) {
	ctx := context.Background()
	b := startBuild(t, newPath(t))
	run := startRun(t, b, "acct")
	load(t, b, entity.Customers, run, t0, false, `{"id":"a"}`)
	load(t, b, entity.Invoices, run, t0, false, `{"id":"i","amount":1,"transactions":[{"id":"t"}]}`)
	load(t, b, entity.Customers, run, t0, false, `{"id":"a","name":"A2"}`)
	l, err := b.newLoader(ctx, entity.Reviews, run.ID, run.Account, t0)
	if err != nil {
		t.Fatal(err)
	}
	l.Add(1, 0, []byte(`{"id":"r"}`))
	l.Discard()
	// hold as many connections at once as the loaders used, so a pooled one is looked at
	for i := range 4 {
		c, err := b.DB().Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		var tables, views int
		err = c.QueryRowContext(ctx, `SELECT (SELECT count(*) FROM duckdb_tables() WHERE temporary),
			(SELECT count(*) FROM duckdb_views() WHERE temporary AND NOT internal)`).Scan(&tables, &views)
		if err != nil {
			t.Fatal(err)
		}
		if tables+views != 0 {
			t.Errorf("pooled connection %d holds %d temp tables and %d temp views", i, tables, views)
		}
	}
}
