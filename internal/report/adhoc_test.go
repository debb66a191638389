package report

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestQueryTable checks what a person sees from report -sql -format table: intervals, instants
// and numbers readable, several statements with the last one's rows, and -var values typed as
// the reports declare them.
func TestQueryTable(t *testing.T) {
	w := testWorld(t)
	for _, tc := range []struct {
		name string
		sql  string
		vars map[string]string
		want []string
	}{
		{"interval", "SELECT INTERVAL 860303451 MICROSECONDS AS a, INTERVAL '1 month 9 days 22:58:23.451' AS b, INTERVAL 0 DAYS AS c",
			nil, []string{"00:14:20.303451", "1 month 9 days 22:58:23.451", "00:00:00"}},
		{"timestamp in the zone", "SELECT TIMESTAMPTZ '2026-10-31 17:00:00.123+00' AS t, DATE '2026-10-31' AS d",
			nil, []string{"2026-11-01 00:00:00 WIB", "2026-10-31"}},
		{"numbers", "SELECT 2.0/3 AS f, 150.5000::DECIMAL(20,4) AS d, 12345678901::HUGEINT AS h",
			nil, []string{"0.6667", "150.5", "12345678901"}},
		{"several statements", "SET VARIABLE x = 41; SELECT getvariable('x') + 1 AS answer;",
			nil, []string{"answer", "42", "(1 rows)"}},
		{"declared var typed", "SELECT getvariable('bucket_1') + 1 AS b, typeof(getvariable('bucket_1')) AS t, getvariable('mine') AS m",
			map[string]string{"bucket_1": "15", "mine": "x"}, []string{"16", "INTEGER", " x"}},
		// a terminal runs no escape sequence and draws no override from the data
		{"invisible characters", "SELECT chr(8238) || 'osotnaS iduB' AS n, 'red' || chr(27) || '[31m' AS e",
			nil, []string{"⟦U+202E⟧osotnaS iduB", "red⟦U+001B⟧[31m"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			_, err := Query(context.Background(), Options{DB: w.db, Vars: tc.vars}, tc.sql, "table", &out)
			if err != nil {
				t.Fatal(err)
			}
			for _, want := range tc.want {
				if !strings.Contains(out.String(), want) {
					t.Errorf("output lacks %q:\n%s", want, out.String())
				}
			}
		})
	}
}

// TestOpenItemsMacroMatchesAging: the warehouse's open_items() macro (macros.sql) gives
// the aging report's items, ids and amounts, at dates before, between and after the syncs.
func TestOpenItemsMacroMatchesAging(t *testing.T) {
	w := testWorld(t)
	wib, _ := time.LoadLocation("Asia/Jakarta")
	for _, d := range []time.Time{firstSync.AddDate(0, 0, -20), firstSync, secondSync.AddDate(0, 0, -1), secondSync, secondSync.AddDate(0, 1, 0)} {
		asOf := d.In(wib).Format(time.DateOnly)
		names, rows := queryRows(t, w.db, "aging_detail.sql", map[string]string{"as_of": asOf}, "")
		idCol, amtCol := slices.Index(names, "id"), slices.Index(names, "amount")
		want := map[string]any{}
		for _, r := range rows {
			want[r[idCol].(string)] = r[amtCol]
		}
		var out bytes.Buffer
		_, err := Query(context.Background(), Options{DB: w.db}, "SELECT id, amount FROM open_items(DATE '"+asOf+"') ORDER BY id", "csv", &out)
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSpace(out.String()), "\r\n")[1:]
		got := map[string]string{}
		for _, l := range lines {
			id, amt, _ := strings.Cut(l, ",")
			got[id] = amt
		}
		if len(want) == 0 && !d.Before(firstSync) {
			t.Errorf("as of %s: no open items at all; the comparison proves nothing", asOf)
		}
		if len(got) != len(want) {
			t.Errorf("as of %s: open_items has %d items, the aging report %d", asOf, len(got), len(want))
		}
		for id, amt := range want {
			if got[id] != fmt.Sprint(amt) {
				t.Errorf("as of %s: item %s amount %q in open_items, %v in the aging report", asOf, id, got[id], amt)
				break
			}
		}
	}
}
