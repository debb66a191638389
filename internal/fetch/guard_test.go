package fetch

import (
	"encoding/json"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/billsync/billsync/internal/api"
)

func page(n, count, size int, total int64, more bool, ids ...string) *api.ListPage {
	p := &api.ListPage{Page: n, PageCount: count, PageSize: size, Total: total, HasMore: more}
	for _, id := range ids {
		p.Items = append(p.Items, json.RawMessage(fmt.Sprintf(`{"id":%q,"name":"n"}`, id)))
	}
	return p
}

func ids(from, n int) []string {
	var out []string
	for i := from; i < from+n; i++ {
		out = append(out, fmt.Sprintf("r%d", i))
	}
	return out
}

// TestGuard: each rule of a paged read, with the page that breaks it and its message.
func TestGuard(t *testing.T) {
	tests := []struct {
		name  string
		pages []*api.ListPage
		want  string // error at the last page; "" = none
	}{
		{"a list read as announced", []*api.ListPage{page(1, 2, 3, 5, true, ids(0, 3)...), page(2, 2, 3, 5, false, ids(3, 2)...)}, ""},
		{"more distinct records than announced", []*api.ListPage{page(1, 100, 10, 20, true, ids(0, 10)...), page(2, 100, 10, 20, true, ids(10, 10)...),
			page(3, 100, 10, 20, true, ids(20, 10)...), page(4, 100, 10, 20, true, ids(30, 10)...), page(5, 100, 10, 20, true, ids(40, 10)...)},
			"GET /x page 5: 50 distinct records, more than the 20 the server announced (pageCount 100, total 20, page size 10) allow; stopped"},
		{"a page repeats an earlier one", []*api.ListPage{page(1, 3, 2, 6, true, "a", "b"), page(2, 3, 2, 6, true, "c", "d"), page(3, 3, 2, 6, true, "a", "b")},
			"GET /x page 3: the same 2 ids as page 1; stopped"},
		{"empty page while hasMore", []*api.ListPage{page(1, 9, 2, -1, true, "a", "b"), page(2, 9, 2, -1, true)},
			"GET /x page 2: empty, yet hasMore is true; stopped"},
		{"past the announced page count", []*api.ListPage{page(1, 1, 2, -1, true, "a", "b"), page(2, 1, 2, -1, true, "c", "d"),
			page(3, 1, 2, -1, true, "e", "f"), page(4, 1, 2, -1, true, "g", "h")},
			"GET /x page 4: past the ceiling of 3 pages derived from what the server announced (pageCount 1, total -1, page size 2); stopped"},
		{"past twice the pages the total needs", []*api.ListPage{page(1, 1000000, 50, 100, true, ids(0, 50)...), page(7, 1000000, 50, 100, true, ids(50, 1)...)},
			"GET /x page 7: past the ceiling of 6 pages"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := newGuard("GET /x", DefaultMaxPages, nil)
			var err error
			for i, p := range tt.pages {
				if _, err = g.check(p.Page, p); err != nil && i < len(tt.pages)-1 {
					t.Fatalf("page %d: %v", p.Page, err)
				}
			}
			if tt.want == "" && err != nil || tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)) {
				t.Fatalf("error %v, want %q", err, tt.want)
			}
		})
	}
}

func TestGuardCursorLoop(t *testing.T) {
	g := newGuard("GET /hl/v2/webhooks/new-history", DefaultMaxPages, nil)
	for i, c := range []string{"100", "200", "300"} {
		if err := g.cursor(i+1, c); err != nil {
			t.Fatal(err)
		}
	}
	err := g.cursor(4, "200")
	if err == nil || err.Error() != `GET /hl/v2/webhooks/new-history page 4: cursor "200" was already handed out by page 2; the cursor loops, stopped` {
		t.Fatalf("error %v", err)
	}
}

func TestGuardCeilingWithoutAnnouncement(t *testing.T) {
	g := newGuard("GET /c", 3, nil)
	for n := 1; n <= 4; n++ {
		_, err := g.check(n, page(n, 0, 0, -1, true, ids(n*10, 2)...))
		if n <= 3 && err != nil || n == 4 && (err == nil || !strings.Contains(err.Error(), "past the ceiling of 3 pages")) {
			t.Fatalf("page %d: %v", n, err)
		}
	}
}

// TestGuardCeilingFromWhatIsKnown: a list that announces nothing is bounded by its last complete
// read (twice its pages and ten), or by FirstReadPages before any; other reads keep MaxPages.
func TestGuardCeilingFromWhatIsKnown(t *testing.T) {
	for _, tc := range []struct {
		list  bool
		known int64
		want  int
		msg   string
	}{
		{true, 250, 2*3 + 10, "the last complete read had 250 records"},
		{true, 0, 10, "the last complete read had 0 records"},
		{true, -1, FirstReadPages, "5000 pages is the first read's ceiling"},
		{true, 1 << 40, FirstReadPages, "the last complete read had"},
		{false, 0, 100_000, "pageCount 0, total -1"},
	} {
		g := newGuard("GET /c", DefaultMaxPages, nil)
		g.list, g.known = tc.list, tc.known
		if _, err := g.check(1, page(1, 0, 100, -1, true, ids(0, 100)...)); err != nil {
			t.Fatal(err)
		}
		if g.ceiling != tc.want || !strings.Contains(g.announced, tc.msg) {
			t.Errorf("list %t known %d: ceiling %d (%s), want %d (%s)", tc.list, tc.known, g.ceiling, g.announced, tc.want, tc.msg)
		}
	}
}

func TestGuardConflicts(t *testing.T) {
	g := newGuard("GET /x", DefaultMaxPages, map[string]bool{"a": true})
	p1 := &api.ListPage{Page: 1, PageCount: 2, PageSize: 2, Total: 3, HasMore: true,
		Items: []json.RawMessage{json.RawMessage(`{"id":"a","name":"one"}`), json.RawMessage(`{"id":"b"}`)}}
	p2 := &api.ListPage{Page: 2, PageCount: 2, PageSize: 2, Total: 3,
		Items: []json.RawMessage{json.RawMessage(`{"id":"a","name":"two"}`), json.RawMessage(`{"id":"c"}`), json.RawMessage(`{"id":"b"}`)}}
	for _, p := range []*api.ListPage{p1, p2} {
		if _, err := g.check(p.Page, p); err != nil {
			t.Fatal(err)
		}
	}
	if len(g.conflicts) != 1 {
		t.Fatalf("conflicts %+v, want one (b repeats identically, which is no conflict)", g.conflicts)
	}
	c := g.conflicts[0]
	if c.ID != "a" || c.FirstPage != 1 || c.FirstIdx != 0 || c.SecondPage != 2 || string(c.FirstRaw) != `{"id":"a","name":"one"}` ||
		string(c.SecondRaw) != `{"id":"a","name":"two"}` {
		t.Errorf("conflict %+v", c)
	}
}

// A conflict names where the earlier version was read, whatever order the pages were checked in
// (pages are read concurrently) and however many pages came between.
func TestGuardConflictPositions(t *testing.T) {
	g := newGuard("GET /x", DefaultMaxPages, nil)
	for _, p := range []*api.ListPage{page(3, 4, 3, 12, true, "g", "h", "i"), page(1, 4, 3, 12, true, "a", "b", "c"),
		page(2, 4, 3, 12, true, "d", "e", "f")} {
		if _, err := g.check(p.Page, p); err != nil {
			t.Fatal(err)
		}
	}
	p4 := &api.ListPage{Page: 4, PageCount: 4, PageSize: 3, Total: 12, Items: []json.RawMessage{
		json.RawMessage(`{"id":"b","name":"changed"}`), json.RawMessage(`{"id":"i","name":"changed"}`), json.RawMessage(`{"id":"e","name":"n"}`)}}
	if _, err := g.check(4, p4); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range g.conflicts {
		got = append(got, fmt.Sprintf("%s %d/%d %d/%d", c.ID, c.FirstPage, c.FirstIdx, c.SecondPage, c.SecondIdx))
	}
	if want := []string{"b 1/1 4/0", "i 3/2 4/1"}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("conflicts %v, want %v (e repeats identically)", got, want)
	}
}

// A guard's memory grows with the distinct records of a list, and at scale 200 the guards were
// most of the sync's Go heap at its peak: one uint64 per id in the map (hash of the content and
// the record's ordinal), not a 16-byte struct of content hash, page and item.
func TestGuardMemoryPerRecord(t *testing.T) {
	const pages, size = 5_000, 200
	heap := func() uint64 {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapAlloc
	}
	before := heap()
	g := newGuard("GET /x", DefaultMaxPages, nil)
	items := make([]json.RawMessage, size)
	for n := 1; n <= pages; n++ {
		for i := range items {
			items[i] = json.RawMessage(fmt.Sprintf(`{"id":"r%d","name":"n"}`, (n-1)*size+i))
		}
		if _, err := g.check(n, &api.ListPage{Page: n, PageCount: pages, PageSize: size, Total: pages * size, HasMore: n < pages, Items: items}); err != nil {
			t.Fatal(err)
		}
	}
	perRecord := float64(heap()-before) / (pages * size)
	runtime.KeepAlive(g)
	if perRecord > 45 {
		t.Errorf("the guard holds %.1f bytes per distinct record, want at most 45", perRecord)
	}
	t.Logf("%.1f bytes per record", perRecord)
}
