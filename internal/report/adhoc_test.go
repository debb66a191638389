package report

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io/fs"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/billsync/billsync/queries"
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

// TestOpenItemsMacroMatchesAging: the warehouse's open_items() macro (queries/macros) gives
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

// TestQueryComputesInTheZone: report -sql computes in BILLSYNC_TZ, as it prints: an invoice
// printed at 06:27 WIB on 1 November is of 1 November, hour 6, month November, in every format;
// a TIMESTAMP without a zone prints as written, never moved by seven hours.
func TestQueryComputesInTheZone(t *testing.T) {
	w := testWorld(t)
	// An invoice created before 07:00 WIB: its UTC date is the day before.
	const q = `SELECT created_at, created_at::DATE AS day, hour(created_at) AS h,
		date_trunc('month', created_at) AS month, current_date - created_at::DATE >= 0 AS past,
		TIMESTAMP '2026-11-27 00:00:00' AS wall
		FROM invoices WHERE hour(timezone('UTC', created_at)) >= 17 ORDER BY id LIMIT 1`
	var csvOut bytes.Buffer
	if _, err := Query(context.Background(), Options{DB: w.db}, q, "csv", &csvOut); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(csvOut.String()), "\r\n")
	if len(lines) != 2 {
		t.Fatalf("want a header and one row:\n%s", csvOut.String())
	}
	f := strings.Split(lines[1], ",")
	created, err := time.Parse(time.RFC3339Nano, f[0])
	if err != nil {
		t.Fatal(err)
	}
	if _, off := created.Zone(); off != 7*3600 {
		t.Errorf("created_at %s is not printed in WIB", f[0])
	}
	if want := created.Format(time.DateOnly); f[1] != want {
		t.Errorf("created_at::DATE = %s for %s, want %s (the day in WIB)", f[1], f[0], want)
	}
	if want := fmt.Sprint(created.Hour()); f[2] != want {
		t.Errorf("hour() = %s for %s, want %s", f[2], f[0], want)
	}
	if want := created.Format("2006-01") + "-01T00:00:00+07:00"; f[3] != want {
		t.Errorf("date_trunc('month') = %s for %s, want %s", f[3], f[0], want)
	}
	if f[5] != "2026-11-27T00:00:00" {
		t.Errorf("TIMESTAMP '2026-11-27 00:00:00' printed %s in CSV, want it as written", f[5])
	}
	var table bytes.Buffer
	if _, err := Query(context.Background(), Options{DB: w.db}, "SELECT TIMESTAMP '2026-11-27 00:00:00' AS wall", "table", &table); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(table.String(), "2026-11-27 00:00:00\n") {
		t.Errorf("TIMESTAMP printed in the table as:\n%s", table.String())
	}
}

// TestQueryFilesAnyZone: every report query names its zone, so it gives the same rows in a UTC
// session (the reports) and in the analyst's zone (report -sql @queries/…).
func TestQueryFilesAnyZone(t *testing.T) {
	w := testWorld(t)
	files, err := fs.Glob(queries.FS, "*.sql")
	if err != nil || len(files) == 0 {
		t.Fatalf("query files: %v %v", files, err)
	}
	vars := map[string]string{"as_of": secondSync.In(time.FixedZone("WIB", 7*3600)).Format(time.DateOnly), "tz": "Asia/Jakarta"}
	for _, file := range files {
		t.Run(file, func(t *testing.T) {
			_, utc := queryRows(t, w.db, file, vars, "")
			_, local := queryRows(t, w.db, file, vars, "", "Asia/Jakarta")
			if a, b := fmt.Sprint(utc), fmt.Sprint(local); a != b {
				t.Errorf("%s gives other rows in an Asia/Jakarta session (%d rows) than in a UTC one (%d rows)", file, len(local), len(utc))
			}
		})
	}
}

// TestQueryJSONAsText: JSON prints as the JSON text the warehouse holds, numbers exact (the
// driver's Go maps printed map[…] and 1.795646446556e+12); lists, structs and 128-bit integers
// print as DuckDB writes them; a column name given twice stays as written.
func TestQueryJSONAsText(t *testing.T) {
	w := testWorld(t)
	const q = `SELECT raw->'$.createdAt' AS c, raw, raw::VARCHAR AS want, epoch_ms(created_at) AS ms,
		[1, 2] AS l, {'a': 66720000} AS s, 340282366920938463463374607431768211455::UHUGEINT AS big,
		1 AS x, 2 AS x
		FROM invoices ORDER BY id LIMIT 3`
	for _, format := range []string{"csv", "table"} {
		var out bytes.Buffer
		if _, err := Query(context.Background(), Options{DB: w.db}, q, format, &out); err != nil {
			t.Fatal(err)
		}
		s := out.String()
		for _, bad := range []string{"map[", "e+"} {
			if strings.Contains(s, bad) {
				t.Errorf("%s output holds %q:\n%s", format, bad, s)
			}
		}
		for _, want := range []string{"340282366920938463463374607431768211455", "[1, 2]", "{'a': 66720000}"} {
			if !strings.Contains(s, want) {
				t.Errorf("%s output lacks %q:\n%s", format, want, s)
			}
		}
	}
	var out bytes.Buffer
	if _, err := Query(context.Background(), Options{DB: w.db}, q, "csv", &out); err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(&out).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(recs[0], ","); got != "c,raw,want,ms,l,s,big,x,x" {
		t.Errorf("header %s", got)
	}
	for _, r := range recs[1:] {
		if r[1] != r[2] || !json.Valid([]byte(r[1])) {
			t.Errorf("raw printed as %.80s…, want the JSON text %.80s…", r[1], r[2])
		}
		if r[0] != r[3] {
			t.Errorf("raw->'$.createdAt' printed %s, want the epoch ms %s", r[0], r[3])
		}
	}
}
