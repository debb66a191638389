package warehouse

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/billsync/billsync/internal/entity"
	"github.com/billsync/billsync/internal/syncdata"
)

var update = flag.Bool("update", false, "rewrite golden files under testdata/")

type goldenCase struct {
	e      entity.Name
	file   string
	table  string
	fill   []string // loaded before, so detail entities have rows to fill
	fillAs entity.Name
}

// TestProjectionGolden loads each entity's fixture records (its declaration's Fixture) and
// compares the typed rows of its table and of its child tables with
// testdata/<table>_<entity>.golden.
func TestProjectionGolden(t *testing.T) {
	for _, c := range goldenCases(t) {
		t.Run(string(c.e)+"_"+c.table, func(t *testing.T) {
			b := startBuild(t, newPath(t))
			run := startRun(t, b, "acct")
			if c.fill != nil {
				load(t, b, c.fillAs, run, t0, false, c.fill...)
			}
			load(t, b, c.e, run, t0, false, fixtureItems(t, c.file)...)
			got := dumpTable(t, b, c.table)
			golden := filepath.Join("testdata", c.table+"_"+string(c.e)+".golden")
			if *update {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run with -update)", err)
			}
			if got != string(want) {
				t.Errorf("%s differs from %s:\n%s", c.table, golden, got)
			}
		})
	}
}

// detailFills are the listed rows a detail's fixture fills.
var detailFills = map[entity.Name]string{
	entity.ProductDetails:        `{"id":"6f8c19ff-5b97-4792-aa89-d2a12797b356","name":"Pembuatan Jasa Web","variant":null}`,
	entity.PaymentRequestDetails: `{"id":"e890d24a-cfc0-4915-83d2-3166b9ffba9e","amount":"100000","status":"unpaid"}`,
}

// goldenCases are every declared entity's fixture and the tables it fills: its table and its
// child tables. A detail first gets the listed row it fills.
func goldenCases(t *testing.T) []goldenCase {
	var cases []goldenCase
	for _, d := range entity.All() {
		if d.Fixture == "" {
			t.Errorf("entity %s declares no Fixture: its merge golden needs the spec's sample of its records", d.Name)
			continue
		}
		c := goldenCase{e: d.Name, file: d.Fixture}
		if d.Rule == entity.FillDetail {
			fill, ok := detailFills[d.Name]
			if !ok {
				t.Errorf("detail %s has no row to fill in detailFills", d.Name)
			}
			c.fill = []string{fill}
			for _, l := range entity.All() {
				if l.Rule != entity.FillDetail && l.TableName() == d.Table {
					c.fillAs = l.Name
				}
			}
		}
		for _, table := range append([]string{d.TableName()}, entityDefs[d.Name].derived...) {
			c.table = table
			cases = append(cases, c)
		}
	}
	return cases
}

// dumpTable renders a table's typed columns (not raw) one "column: value" per line.
func dumpTable(t *testing.T, b *Build, table string) string {
	t.Helper()
	rows, err := b.DB().Query(fmt.Sprintf("SELECT * EXCLUDE (raw) FROM %s ORDER BY ALL", table))
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	var sb strings.Builder
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		for i, c := range cols {
			v := vals[i]
			if tm, ok := v.(time.Time); ok {
				v = tm.UTC().Format(time.RFC3339Nano)
			}
			fmt.Fprintf(&sb, "%s: %v\n", c, v)
		}
		sb.WriteString("--\n")
	}
	return sb.String()
}

func TestTimeFormats(t *testing.T) {
	want := time.Date(2025, 3, 4, 5, 6, 7, 123e6, time.UTC)
	cases := []struct{ name, value string }{
		{"epoch ms number", `1741064767123`},
		{"epoch ms string", `"1741064767123"`},
		{"ISO with Z", `"2025-03-04T05:06:07.123Z"`},
		{"ISO with offset", `"2025-03-04T12:06:07.123+07:00"`},
		{"ISO with compact offset", `"2025-03-04T00:06:07.123-0500"`},
		{"ISO with basic offset, WIB", `"2025-03-04T12:06:07.123+0700"`},

		{"ISO without offset is UTC", `"2025-03-04T05:06:07.123"`},
	}
	b := startBuild(t, newPath(t))
	run := startRun(t, b, "acct")
	var recs []string
	for i, c := range cases {
		recs = append(recs, fmt.Sprintf(`{"id":"w%d","createdAt":%s}`, i, c.value))
	}
	load(t, b, entity.WebhookDeliveries, run, t0, false, recs...)
	for i, c := range cases {
		var got time.Time
		if err := b.DB().QueryRow(`SELECT created_at FROM webhook_deliveries WHERE id = ?`, fmt.Sprintf("w%d", i)).Scan(&got); err != nil {
			t.Fatal(err)
		}
		if !got.Equal(want) {
			t.Errorf("%s: %s -> %v, want %v", c.name, c.value, got.UTC(), want)
		}
	}
}

func TestNumbersAsStrings(t *testing.T) {
	b := startBuild(t, newPath(t))
	run := startRun(t, b, "acct")
	load(t, b, entity.Invoices, run, t0, false,
		`{"id":"a","amount":"25000000000","createdAt":"1691046324713"}`,
		`{"id":"b","amount":25000000000.0}`,
		`{"id":"c","amount":""}`)
	for id, want := range map[string]string{"a": "25000000000", "b": "25000000000", "c": ""} {
		if got := queryString(t, b.DB(), `SELECT amount::VARCHAR FROM invoices WHERE id = ?`, id); got != want {
			t.Errorf("amount of %s = %q, want %q", id, got, want)
		}
	}
	load(t, b, entity.Reviews, run, t0, false, `{"id":"r","rating":"4.5"}`)
	if got := queryString(t, b.DB(), `SELECT rating::VARCHAR FROM reviews`); got != "4.5" {
		t.Errorf("rating = %s", got)
	}
}

func TestValidationErrors(t *testing.T) {
	cases := []struct {
		name    string
		e       entity.Name
		records []string
		want    []string
	}{
		{"amount not an integer", entity.Invoices,
			[]string{`{"id":"ok","amount":1}`, `{"id":"9f2c","amount":"abc"}`},
			[]string{`invoices page 1 item 1 (id 9f2c): amount: "abc" is not an integer`}},
		{"fraction is not an integer", entity.Invoices, []string{`{"id":"x","amount":12.5}`},
			[]string{`(id x): amount: "12.5" is not an integer`}},
		{"missing id", entity.Customers, []string{`{"name":"n"}`}, []string{`customers page 1 item 0: id: missing`}},
		{"bad timestamp", entity.Reviews, []string{`{"id":"r","createdAt":"yesterday"}`},
			[]string{`createdAt: "yesterday" is not a timestamp`}},
		{"broken JSON", entity.Reviews, []string{`{"id": r}`}, []string{`reviews page 1 item 0: not a JSON object`}},
		{"webhook without createdAt", entity.WebhookDeliveries, []string{`{"id":"w","status":"SUCCESS"}`},
			[]string{`webhook_deliveries page 1 item 0 (id w): createdAt: missing`}},
		{"bad variant string", entity.Products, []string{`{"id":"p","variant":"[{"}`},
			[]string{`variant: not a JSON-encoded array`}},
		{"several problems, at most five listed", entity.Invoices, []string{
			`{"id":"1","amount":"x"}`, `{"id":"2","amount":"x"}`, `{"id":"3","amount":"x"}`,
			`{"id":"4","amount":"x"}`, `{"id":"5","amount":"x"}`, `{"id":"6","amount":"x"}`},
			[]string{"6 invalid records", "(id 5)"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := startBuild(t, newPath(t))
			run := startRun(t, b, "acct")
			_, err := tryLoad(b, c.e, run, t0, false, c.records...)
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
			if strings.Contains(err.Error(), "(id 6)") {
				t.Errorf("more than five records listed: %v", err)
			}
			table := entityDefs[c.e].table
			if n := queryInt(t, b.DB(), "SELECT count(*) FROM "+table); n != 0 {
				t.Errorf("%d rows merged despite the error", n)
			}
		})
	}
}

func TestAddRejectsNonObjects(t *testing.T) {
	b := startBuild(t, newPath(t))
	run := startRun(t, b, "acct")
	l, err := b.newLoader(context.Background(), entity.Invoices, run.ID, run.Account, t0)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Merge(context.Background())
	err = l.Add(3, 7, []byte(`[1,2]`))
	if err == nil || !strings.Contains(err.Error(), "invoices page 3 item 7") {
		t.Fatalf("err = %v", err)
	}
}

func changes(t *testing.T, b *Build, where string) []string {
	t.Helper()
	rows, err := b.DB().Query(`SELECT entity || ' ' || record_id || ' ' || field || ' ' || coalesce(old_value, '∅') || '→' || coalesce(new_value, '∅')
		FROM record_changes WHERE ` + where + ` ORDER BY ALL`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		rows.Scan(&s)
		out = append(out, s)
	}
	return out
}

func TestMergeLifecycle(t *testing.T) {
	path := newPath(t)
	b := startBuild(t, path)
	db := b.DB()
	ctx := context.Background()
	inv := func(id, status string, amount int) string {
		return fmt.Sprintf(`{"id":%q,"amount":%d,"status":%q,"name":"n","transactions":[{"id":"t-%s","status":"created"}]}`, id, amount, status, id)
	}
	r1 := startRun(t, b, "acct")
	res := load(t, b, entity.Invoices, r1, t0, true, inv("a", "active", 10), inv("b", "active", 20), inv("c", "active", 30))
	if res != (syncdata.MergeResult{Inserted: 3}) {
		t.Fatalf("first merge %+v", res)
	}
	if err := b.finishRun(ctx, r1.ID, syncdata.RunStats{Status: "succeeded"}); err != nil {
		t.Fatal(err)
	}

	t.Run("identical merge changes nothing", func(t *testing.T) {
		r := startRun(t, b, "acct")
		before := queryInt(t, db, `SELECT count(*) FROM record_changes`)
		res := load(t, b, entity.Invoices, r, t0.Add(time.Hour), true, inv("a", "active", 10), inv("b", "active", 20), inv("c", "active", 30))
		if res != (syncdata.MergeResult{Unchanged: 3}) {
			t.Errorf("merge %+v", res)
		}
		if after := queryInt(t, db, `SELECT count(*) FROM record_changes`); after != before {
			t.Errorf("change rows %d -> %d", before, after)
		}
		if n := queryInt(t, db, `SELECT count(*) FROM invoices WHERE last_seen_run = ? AND first_seen_run = ?`, r.ID, r1.ID); n != 3 {
			t.Errorf("%d rows with updated last_seen_run and kept first_seen_run", n)
		}
		b.finishRun(ctx, r.ID, syncdata.RunStats{Status: "succeeded"})
	})

	t.Run("changes, deletion and duplicates", func(t *testing.T) {
		r := startRun(t, b, "acct")
		paid := strings.Replace(inv("a", "paid", 10), `"created"`, `"paid"`, 1)
		res := load(t, b, entity.Invoices, r, t0.Add(2*time.Hour), true, inv("a", "active", 10), paid, inv("b", "active", 25))
		if res != (syncdata.MergeResult{Updated: 2, Deleted: 1}) {
			t.Errorf("merge %+v", res)
		}
		got := changes(t, b, fmt.Sprintf("run_id = %d", r.ID))
		want := []string{"invoice_transactions t-a status created→paid", "invoices a status active→paid",
			"invoices b amount 20→25", "invoices c _deleted ∅→∅"}
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("changes:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
		if n := queryInt(t, db, `SELECT count(*) FROM invoices WHERE id = 'a'`); n != 1 {
			t.Errorf("duplicate staged record gave %d rows", n)
		}
		if at := queryString(t, db, `SELECT deleted_upstream_at::VARCHAR FROM invoices WHERE id = 'c'`); at != "2026-06-01 07:00:00+00" {
			t.Errorf("deleted_upstream_at = %q", at)
		}
		b.finishRun(ctx, r.ID, syncdata.RunStats{Status: "succeeded"})
	})

	t.Run("reappearing row is restored", func(t *testing.T) {
		r := startRun(t, b, "acct")
		res := load(t, b, entity.Invoices, r, t0.Add(3*time.Hour), false, inv("c", "active", 30))
		if res != (syncdata.MergeResult{Restored: 1}) {
			t.Errorf("merge %+v", res)
		}
		if got := changes(t, b, fmt.Sprintf("run_id = %d AND entity = 'invoices'", r.ID)); len(got) != 1 || got[0] != "invoices c _restored ∅→∅" {
			t.Errorf("changes %v", got)
		}
		if n := queryInt(t, db, `SELECT count(*) FROM invoices WHERE deleted_upstream_at IS NOT NULL`); n != 0 {
			t.Errorf("%d rows still deleted", n)
		}
	})
}

func TestMultiAccountIsolation(t *testing.T) {
	b := startBuild(t, newPath(t))
	one, two := startRun(t, b, "one"), startRun(t, b, "two")
	load(t, b, entity.Customers, one, t0, true, `{"id":"c1","name":"A"}`, `{"id":"shared","name":"A"}`)
	load(t, b, entity.Customers, two, t0, true, `{"id":"shared","name":"B"}`)
	// a full list of account two must not touch account one
	if n := queryInt(t, b.DB(), `SELECT count(*) FROM customers WHERE account = 'one' AND deleted_upstream_at IS NULL`); n != 2 {
		t.Errorf("account one has %d live rows, want 2", n)
	}
	if got := queryString(t, b.DB(), `SELECT name FROM customers WHERE account = 'one' AND id = 'shared'`); got != "A" {
		t.Errorf("account one's shared customer renamed to %q", got)
	}
	if n := queryInt(t, b.DB(), `SELECT count(*) FROM record_changes WHERE account = 'one' AND field <> '_created'`); n != 0 {
		t.Errorf("%d change rows for account one", n)
	}
}

func TestProductVariantsBothShapes(t *testing.T) {
	b := startBuild(t, newPath(t))
	run := startRun(t, b, "acct")
	load(t, b, entity.Products, run, t0, true,
		`{"id":"arr","variants":[{"id":"v1","name":"One","amount":"100","status":"ACTIVE","createdAt":1778236239496}]}`,
		`{"id":"str","variant":"[{\"id\":\"v2\",\"name\":\"Two\",\"amount\":200,\"limit\":null}]"}`,
		`{"id":"none","variant":null}`)
	got := queryString(t, b.DB(), `SELECT string_agg(product_id || '/' || id || '/' || name || '/' || amount, ',' ORDER BY id) FROM product_variants`)
	if got != "arr/v1/One/100,str/v2/Two/200" {
		t.Errorf("variants %q", got)
	}
	// the detail drops v2 and adds v3: v2 is marked deleted, user_id and qty are filled
	load(t, b, entity.ProductDetails, run, t0.Add(time.Hour), false,
		`{"id":"str","userId":"u1","qty":"5","variant":"[{\"id\":\"v3\",\"name\":\"Three\",\"amount\":300}]"}`,
		`{"id":"unknown-product","userId":"u1"}`)
	if got := queryString(t, b.DB(), `SELECT user_id || '/' || qty || '/' || detail_fetched_at::VARCHAR FROM products WHERE id = 'str'`); got != "u1/5/2026-06-01 06:00:00+00" {
		t.Errorf("detail fill %q", got)
	}
	if got := queryString(t, b.DB(), `SELECT string_agg(id, ',' ORDER BY id) FROM product_variants WHERE deleted_upstream_at IS NULL`); got != "v1,v3" {
		t.Errorf("live variants %q", got)
	}
	if n := queryInt(t, b.DB(), `SELECT count(*) FROM products`); n != 3 {
		t.Errorf("a detail of an unknown product inserted a row: %d products", n)
	}
}

func TestCreditLedgerSignedAmount(t *testing.T) {
	b := startBuild(t, newPath(t))
	run := startRun(t, b, "acct")
	load(t, b, entity.CreditLedger, run, t0, true,
		`{"id":"neg","amount":-100000,"createdAt":"2025-08-22T10:32:04.204Z"}`,
		`{"id":"pos","amount":"2500.5"}`,
		`{"id":"spec","credit":10,"debit":0}`,
		// wider than DECIMAL(18,4) holds: the 128-bit cast, rounded alike
		`{"id":"wide","credit":"1234567890123456.78905","debit":" 0.00005 "}`)
	got := queryString(t, b.DB(), `SELECT string_agg(id || ':' || credit || '/' || debit, ',' ORDER BY id) FROM credit_ledger`)
	if got != "neg:0.0000/100000.0000,pos:2500.5000/0.0000,spec:10.0000/0.0000,wide:1234567890123456.7891/0.0001" {
		t.Errorf("ledger %q", got)
	}
	// incremental: a later page without these rows deletes nothing, even with full=true
	res := load(t, b, entity.CreditLedger, startRun(t, b, "other"), t0, true, `{"id":"x","credit":1}`)
	if res.Deleted != 0 || queryInt(t, b.DB(), `SELECT count(*) FROM credit_ledger WHERE deleted_upstream_at IS NOT NULL`) != 0 {
		t.Errorf("incremental entity marked deletions: %+v", res)
	}
}

func TestWebhookPayloadAndStatusChange(t *testing.T) {
	b := startBuild(t, newPath(t))
	run := startRun(t, b, "acct")
	rec := func(status string) string {
		return `{"id":"w","payload":"{\"event\":\"payment.reminder\",\"data\":{\"amount\":5}}","status":"` + status + `","Webhooktype":"x","createdAt":"2025-01-01T00:00:00Z"}`
	}
	load(t, b, entity.WebhookDeliveries, run, t0, false, rec("PENDING"))
	load(t, b, entity.WebhookDeliveries, run, t0.Add(time.Minute), false, rec("SUCCESS"))
	got := queryString(t, b.DB(), `SELECT event_type || ' ' || (event_data->>'$.amount') || ' ' || webhook_type || ' ' || status FROM webhook_deliveries`)
	if got != "payment.reminder 5 x SUCCESS" {
		t.Errorf("row %q", got)
	}
	if c := changes(t, b, "field = 'status'"); len(c) != 1 || c[0] != "webhook_deliveries w status PENDING→SUCCESS" {
		t.Errorf("changes %v", c)
	}
}

// A payload that is no JSON leaves its delivery's event columns empty and its neighbours' parsed:
// the fast parse fails on it and the merge starts over checked (webhook_deliveries.sql).
func TestWebhookUnreadablePayload(t *testing.T) {
	for _, payload := range []string{`"not json"`, `"{\"event\":"`, `5`, `null`} {
		t.Run(payload, func(t *testing.T) {
			b := startBuild(t, newPath(t))
			run := startRun(t, b, "acct")
			load(t, b, entity.WebhookDeliveries, run, t0, false,
				`{"id":"a","payload":"{\"event\":\"payment.reminder\",\"data\":{\"amount\":5}}","createdAt":"2025-01-01T00:00:00Z"}`,
				`{"id":"b","payload":`+payload+`,"createdAt":"2025-01-01T00:00:00Z"}`)
			got := queryString(t, b.DB(), `SELECT string_agg(id || ' ' || coalesce(event_type, '-') || ' ' || coalesce(event_data->>'$.amount', '-'), ', ' ORDER BY id) FROM webhook_deliveries`)
			if got != "a payment.reminder 5, b - -" {
				t.Errorf("rows %q", got)
			}
		})
	}
}

// The account's first sync of an entity writes no per-record _created rows (it
// does not know when those records appeared); later runs do, also for children.
func TestCreatedRowsOnlyAfterFirstSync(t *testing.T) {
	ctx := context.Background()
	b := startBuild(t, newPath(t))
	inv := func(id string) string {
		return fmt.Sprintf(`{"id":%q,"amount":1,"status":"active","transactions":[{"id":"t-%s","status":"created"}]}`, id, id)
	}
	r1 := startRun(t, b, "acct")
	load(t, b, entity.Invoices, r1, t0, true, inv("a"))
	load(t, b, entity.Invoices, r1, t0, false, inv("b")) // a second merge of the same first run
	if got := changes(t, b, "true"); len(got) != 0 {
		t.Errorf("first sync wrote change rows: %v", got)
	}
	if n := queryInt(t, b.DB(), `SELECT count(*) FROM invoices WHERE first_seen_run = ? AND first_seen_at = ?`, r1.ID, t0); n != 2 {
		t.Errorf("%d invoices with the first run's first_seen columns, want 2", n)
	}
	b.finishRun(ctx, r1.ID, syncdata.RunStats{Status: "succeeded"})

	r2 := startRun(t, b, "acct")
	res := load(t, b, entity.Invoices, r2, t0.Add(time.Hour), true, inv("a"), inv("b"), inv("c"))
	if res != (syncdata.MergeResult{Inserted: 1, Unchanged: 2}) {
		t.Errorf("second run %+v", res)
	}
	want := "invoice_transactions t-c _created ∅→∅\ninvoices c _created ∅→∅"
	if got := strings.Join(changes(t, b, "true"), "\n"); got != want {
		t.Errorf("changes:\n%s\nwant:\n%s", got, want)
	}
	if n := queryInt(t, b.DB(), `SELECT count(*) FROM invoice_transactions WHERE first_seen_run IS NULL`); n != 0 {
		t.Errorf("%d transactions without first_seen_run", n)
	}
}

// Unreadable JSON on a merge against stored rows is reported per record, and a
// changed record is replaced keeping its first_seen columns.
func TestListMergeValidationAndReplace(t *testing.T) {
	b := startBuild(t, newPath(t))
	r1 := startRun(t, b, "acct")
	load(t, b, entity.Customers, r1, t0, true, `{"id":"a","name":"A"}`, `{"id":"b","name":"B"}`)
	b.finishRun(context.Background(), r1.ID, syncdata.RunStats{Status: "succeeded"})
	r2 := startRun(t, b, "acct")
	_, err := tryLoad(b, entity.Customers, r2, t0.Add(time.Hour), true, `{"id":"a","name":"A"}`, `{"id": b}`)
	if err == nil || !strings.Contains(err.Error(), "customers page 1 item 1: not a JSON object") {
		t.Fatalf("err = %v", err)
	}
	res := load(t, b, entity.Customers, r2, t0.Add(time.Hour), true, `{"id":"a","name":"A"}`, `{"id":"b","name":"B2"}`)
	if res != (syncdata.MergeResult{Updated: 1, Unchanged: 1}) {
		t.Errorf("merge %+v", res)
	}
	got := queryString(t, b.DB(), `SELECT string_agg(id || ':' || name || ':' || first_seen_run || ':' || last_seen_run, ',' ORDER BY id) FROM customers`)
	if want := fmt.Sprintf("a:A:%d:%d,b:B2:%d:%d", r1.ID, r2.ID, r1.ID, r2.ID); got != want {
		t.Errorf("customers %s, want %s", got, want)
	}
}

// A changed list record is replaced; the detail columns another entity filled stay.
func TestChangedProductKeepsDetailColumns(t *testing.T) {
	b := startBuild(t, newPath(t))
	r1 := startRun(t, b, "acct")
	load(t, b, entity.Products, r1, t0, true, `{"id":"p","name":"One","variant":null}`)
	load(t, b, entity.ProductDetails, r1, t0, false, `{"id":"p","userId":"u1","qty":"3"}`)
	b.finishRun(context.Background(), r1.ID, syncdata.RunStats{Status: "succeeded"})
	r2 := startRun(t, b, "acct")
	load(t, b, entity.Products, r2, t0.Add(time.Hour), true, `{"id":"p","name":"Two","variant":null}`)
	got := queryString(t, b.DB(), `SELECT name || '/' || user_id || '/' || qty || '/' || first_seen_run || '/' || count(*) OVER () FROM products`)
	if want := fmt.Sprintf("Two/u1/3/%d/1", r1.ID); got != want {
		t.Errorf("product %s, want %s", got, want)
	}
}

// Merges of different entities run concurrently during a sync's list phase (each on its own
// connection; fetch keeps one merge at a time per entity). Their tables differ and all of them
// append to record_changes, so none may fail with a transaction conflict: first loads, then
// changed records (replaced rows, change history, derived invoice transactions) side by side,
// in batches small enough that commits and checkpoints interleave.
func TestConcurrentMergesOfDifferentEntities(t *testing.T) {
	b := startBuild(t, newPath(t))
	const batches, perBatch = 6, 40
	record := map[entity.Name]func(i int, v string) string{
		entity.Customers: func(i int, v string) string { return fmt.Sprintf(`{"id":"c%d","email":"%s@example.com"}`, i, v) },
		entity.Invoices: func(i int, v string) string {
			return fmt.Sprintf(`{"id":"i%d","status":"%s","amount":%d,"transactions":[{"id":"t%d","status":"%s"}]}`, i, v, i, i, v)
		},
		entity.Reviews: func(i int, v string) string { return fmt.Sprintf(`{"id":"r%d","status":"%s","rating":4}`, i, v) },
		entity.WebhookDeliveries: func(i int, v string) string {
			return fmt.Sprintf(`{"id":"w%d","status":"%s","payload":"{\"event\":\"e\",\"data\":{}}","createdAt":1770000000000}`, i, v)
		},
	}
	for round, v := range []string{"one", "two"} {
		run := startRun(t, b, "acct")
		at := t0.Add(time.Duration(round) * time.Hour)
		var wg sync.WaitGroup
		errs := make(chan error, len(record)*batches)
		for e, rec := range record {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for n := range batches {
					var rs []string
					for i := n * perBatch; i < (n+1)*perBatch; i++ {
						rs = append(rs, rec(i, v))
					}
					if _, err := tryLoad(b, e, run, at, false, rs...); err != nil {
						errs <- fmt.Errorf("round %d %s batch %d: %w", round, e, n, err)
						return
					}
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
	}
	for table, want := range map[string]int64{"customers": 240, "invoices": 240, "invoice_transactions": 240, "reviews": 240, "webhook_deliveries": 240} {
		if n := queryInt(t, b.DB(), "SELECT count(*) FROM "+table+" WHERE account = 'acct'"); n != want {
			t.Errorf("%s: %d rows, want %d", table, n, want)
		}
	}
	// the second round changed one field of every record of every entity
	got := queryString(t, b.DB(), `SELECT string_agg(entity || ' ' || field || ' ' || n, ', ' ORDER BY entity, field)
		FROM (SELECT entity, field, count(*) n FROM record_changes WHERE old_value = 'one' OR old_value LIKE 'one@%' GROUP BY ALL)`)
	if want := "customers email 240, invoice_transactions status 240, invoices status 240, reviews status 240, webhook_deliveries status 240"; got != want {
		t.Errorf("change history: %s\nwant %s", got, want)
	}
}

// A batch of the account's first sync whose id an earlier batch of the same run stored (the
// list moved under the pager) takes the list path: the row is replaced by the later read,
// never stored twice, and no change history is owed yet.
func TestFirstSyncBatchRepeatingAnEarlierID(t *testing.T) {
	b := startBuild(t, newPath(t))
	r1 := startRun(t, b, "acct")
	load(t, b, entity.Customers, r1, t0, false, `{"id":"a","name":"A"}`, `{"id":"b","name":"B"}`)
	res := load(t, b, entity.Customers, r1, t0, false, `{"id":"c","name":"C"}`, `{"id":"a","name":"A2"}`)
	if res != (syncdata.MergeResult{Inserted: 1, Updated: 1}) {
		t.Errorf("second batch %+v", res)
	}
	got := queryString(t, b.DB(), `SELECT string_agg(id || ':' || name, ',' ORDER BY id) FROM customers`)
	if want := "a:A2,b:B,c:C"; got != want {
		t.Errorf("customers %s, want %s", got, want)
	}
}
