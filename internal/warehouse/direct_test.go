package warehouse

import (
	"bytes"
	"context"
	"log/slog"
	"regexp"
	"strings"
	"sync"
	"testing"
)

// syncBuffer is a log sink tests read while merges write to it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

var mergedPathRe = regexp.MustCompile(`msg=merged entity=(\S+) .* path=(\S+)`)

// mergePaths lists "entity:path" for every merge the log shows, in order.
func mergePaths(log string) []string {
	var out []string
	for _, m := range mergedPathRe.FindAllStringSubmatch(log, -1) {
		out = append(out, m[1]+":"+m[2])
	}
	return out
}

func startLoggedBuild(t *testing.T) (*Build, *syncBuffer) {
	t.Helper()
	var buf syncBuffer
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
		e       Entity
		records []string
	}
	cases := []struct {
		name    string
		batches []batch
		paths   []string // of the merges that succeeded
		err     string   // of the last batch
		rows    string   // customers as id:name, after the batches
	}{
		{name: "valid records", batches: []batch{{Customers, []string{`{"id":"a","name":"A"}`, `{"id":"b","name":"B"}`}}},
			paths: []string{"customers:direct"}, rows: "a:A,b:B"},
		{name: "batches with new ids", batches: []batch{
			{Customers, []string{`{"id":"a","name":"A"}`}}, {Customers, []string{`{"id":"b","name":"B"}`}}},
			paths: []string{"customers:direct", "customers:direct"}, rows: "a:A,b:B"},
		{name: "an id twice in the batch: the later fetch wins", batches: []batch{
			{Customers, []string{`{"id":"a","name":"A"}`, `{"id":"b","name":"B"}`, `{"id":"a","name":"A2"}`}}},
			paths: []string{"customers:first"}, rows: "a:A2,b:B"},
		{name: "the same record twice in the batch", batches: []batch{
			{Customers, []string{`{"id":"a","name":"A"}`, `{"id":"a","name":"A"}`}}},
			paths: []string{"customers:first"}, rows: "a:A"},
		{name: "an id an earlier batch stored", batches: []batch{
			{Customers, []string{`{"id":"a","name":"A"}`}}, {Customers, []string{`{"id":"b","name":"B"}`, `{"id":"a","name":"A2"}`}}},
			paths: []string{"customers:direct", "customers:list"}, rows: "a:A2,b:B"},
		{name: "an invalid record: every problem named, nothing merged", batches: []batch{
			{Customers, []string{`{"id":"a","createdAt":"soon"}`, `{"name":"no id"}`, `{"id":"c"}`}}},
			err: "customers: 2 invalid records, nothing merged:\n  customers page 1 item 0 (id a): createdAt: \"soon\" is not a timestamp\n  customers page 1 item 1: id: missing"},
		{name: "unreadable JSON", batches: []batch{{Customers, []string{`{"id":"a"}`, `{"id": b}`}}},
			err: "customers page 1 item 1: not a JSON object"},
		{name: "a list with child tables", batches: []batch{{Invoices, []string{`{"id":"i","amount":1}`}}},
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
	for _, c := range goldenCases {
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
