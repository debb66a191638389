package jobs

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/billsync/billsync/internal/api"
)

func TestParseMoment(t *testing.T) {
	exact := time.Date(2026, 11, 23, 7, 47, 44, 0, time.UTC)
	for _, tc := range []struct {
		raw    string
		lo, hi time.Time
		ok     bool
	}{
		{`"2026-11-23T07:47:44.000Z"`, exact, exact, true},
		{`"2026-11-23T07:47:44Z"`, exact, exact, true},
		{`"2026-11-23T14:47:44+0700"`, exact, exact, true},
		{`"2026-11-23T14:47:44+07:00"`, exact, exact, true},
		{`"2026-11-23T14:47:44.5+0700"`, exact.Add(500 * time.Millisecond), exact.Add(500 * time.Millisecond), true},
		{`"2026-11-23 14:47:44+07:00"`, exact, exact, true},
		{`1795420064000`, exact, exact, true},
		{`"1795420064000"`, exact, exact, true},
		{`"2026-11-23 07:47:44"`, exact.Add(-14 * time.Hour), exact.Add(12 * time.Hour), true},
		{`"2026-11-23T07:47:44"`, exact.Add(-14 * time.Hour), exact.Add(12 * time.Hour), true},
		{`"23/11/2026 14:47"`, time.Time{}, time.Time{}, false},
		{`null`, time.Time{}, time.Time{}, false},
		{`""`, time.Time{}, time.Time{}, false},
	} {
		m, ok := parseMoment(json.RawMessage(tc.raw))
		if ok != tc.ok || !m.lo.Equal(tc.lo) || !m.hi.Equal(tc.hi) {
			t.Errorf("%s: %v %v..%v, want %v %v..%v", tc.raw, ok, m.lo, m.hi, tc.ok, tc.lo, tc.hi)
		}
	}
}

// TestReadAllProvesCompleteness: a read is complete only when the pages end, nothing repeats and the count
// matches; a service that ignores page stops at once instead of paging to the cap.
func TestReadAllProvesCompleteness(t *testing.T) {
	items := func(ids ...int) []json.RawMessage {
		var out []json.RawMessage
		for _, id := range ids {
			out = append(out, json.RawMessage(fmt.Sprintf(`{"id":"r%d"}`, id)))
		}
		return out
	}
	for _, tc := range []struct {
		name  string
		pages map[int]*api.ListPage
		want  string // "" = complete
		calls int
	}{
		{"complete", map[int]*api.ListPage{1: {Items: items(1, 2), Total: 3, HasMore: true}, 2: {Items: items(3), Total: 3}}, "", 2},
		{"count short", map[int]*api.ListPage{1: {Items: items(1, 2), Total: 4, HasMore: true}, 2: {Items: items(3), Total: 4}},
			"3 distinct records were read but the service reported 4", 6},
		{"page ignored", map[int]*api.ListPage{1: {Items: items(1, 2), Total: 9, HasMore: true}, 2: {Items: items(1, 2), Total: 9, HasMore: true}},
			"page 2 held only records already read", 2},
		{"no total, ends", map[int]*api.ListPage{1: {Items: items(1), Total: -1, HasMore: true}, 2: {Total: -1}}, "", 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			calls := 0
			l, err := readAll("test list", func(n int) (*api.ListPage, error) {
				calls++
				if p, ok := tc.pages[n]; ok {
					return p, nil
				}
				return tc.pages[len(tc.pages)], nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if (tc.want == "") != (l.incomplete == "") || !strings.Contains(l.incomplete, tc.want) || calls != tc.calls {
				t.Errorf("incomplete %q after %d calls, want %q after %d", l.incomplete, calls, tc.want, tc.calls)
			}
		})
	}
}
