package delivery

// The reader: what people receive read back as a person reads it, without the code that wrote
// it (excelize as a reader, encoding/csv, net/mail and mime/multipart, an HTML parser), in both
// locales: a delivery of the six reports into the outbox, its text and HTML parts and the
// workbooks attached, each summary's headline; the credit tables' data sheets and CSVs (both
// dialects) row by row; the data-quality counts against their sheets' and CSVs' rows. Every
// figure found is paired with its label and compared with the same quantity computed by SQL of
// this file from the warehouse's tables (not queries/): a label beside another row's figures, a
// missing row, a total that does not add up, a figure that differs from its source, or a figure
// no case here checks, fails. The cases are data: readerTables, readerFigures, moreFigures,
// readerSums.

import (
	"context"
	"database/sql"
	"encoding/base64"
	"encoding/csv"
	"fmt"
	"io"
	"math"
	mimetype "mime"
	"mime/multipart"
	"mime/quotedprintable"
	"net/mail"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/billsync/billsync/internal/config"
	"github.com/billsync/billsync/internal/duckfile"
	"github.com/billsync/billsync/internal/report"
	"github.com/xuri/excelize/v2"
	"golang.org/x/net/html"
)

// loc is a text in each locale, as a reader sees it.
type loc map[string]string

// readerAsOf is the as-of date of the deliverables read: the day before the test world's sync.
var readerAsOf = time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)

// figureCase is one headline figure: its label on the summary and in the e-mail, and the SQL
// that computes it from the warehouse. csv names the data sheet's CSV (and tab) whose rows it counts.
type figureCase struct {
	report string
	label  loc
	sql    string
	csv    string // the CSV file's suffix whose data rows the figure counts; "" = none
	tab    loc    // the data sheet whose rows the figure counts
	// where picks the rows the figure counts: the column's (title) value, as the locale says it
	where *struct{ col, value loc }
	tol   float64 // more than the printed precision allows (a weighted average of rounded ones)
}

// tableCase is a headline table: its label column's heading, each figure's title, the SQL
// giving a row per subtotal (label, id, then the figures in the titles' order), the totals row's
// label and which figures it adds, and the data sheet and CSV listing the same rows.
type tableCase struct {
	report  string
	heading loc   // the label column's heading on the summary
	cols    []loc // the figures' titles
	tol     []float64
	sql     string
	total   loc
	adds    []bool // the figures the totals row adds up
	// identity: figure 1 + figure 2 - figure 3 = figure 4 on every row and the totals row
	// (credit: opening + credits - debits = closing), as indices into cols.
	identity []int
	// the data sheet and its CSV: tab, CSV suffix, the label columns' titles and the ID column's
	tab       loc
	csv       string
	labelCols []loc
	idCol     loc
	// cut: the summary shows at most this many rows, then says where the rest are
	cut int
}

// The words a reader knows (docs/reports.md's glossary), for the SQL's labels.
var readerWords = map[string]loc{
	"ADD_ON":        {"id": "Add-on", "en": "Add-on"},
	"MEMBERSHIP":    {"id": "Keanggotaan", "en": "Membership"},
	"OK":            {"id": "OK", "en": "OK"},
	"NEVER FETCHED": {"id": "BELUM PERNAH DIAMBIL", "en": "NEVER FETCHED"},
	"headline":      {"id": "Angka utama", "en": "Headline figures"},
	"checks":        {"id": "Pemeriksaan", "en": "Checks"},
	"notes":         {"id": "Catatan", "en": "Notes"},
	"sheets":        {"id": "Lembar", "en": "Sheets"},
}

var reportTitles = map[string]loc{
	"credit":       {"id": "Saldo kredit", "en": "Credit balances"},
	"data-quality": {"id": "Kualitas data dan kesehatan sinkronisasi", "en": "Data quality and sync health"},
	"aging":        {"id": "Umur piutang", "en": "Unpaid aging"},
	"reviews":      {"id": "Ulasan produk", "en": "Product reviews"},
	"webhooks":     {"id": "Kesehatan pengiriman webhook", "en": "Webhook delivery health"},
	"collections":  {"id": "Penagihan", "en": "Collections"},
}

// everyFigure are the reports whose every headline figure and table has a case here: a figure
// found on their summary or in the message without one fails. It is every report (and
// reportTitles has each one's title): TestReaderCoversEveryReport fails, naming it, for a report
// in reports/ that is missing here, else its figures would be checked by nothing.
var everyFigure = []string{"credit", "data-quality", "aging", "reviews", "webhooks", "collections"}

// addedOnly are figures checked only as parts of a sum whose total has its own case (readerSums):
// collections' lines between its open amount and aging's outstanding, which hold what only aging
// counts (unpaid transactions of other kinds, items issued before the months shown) and the rest.
var addedOnly = map[string][]string{"collections": {
	"+ belum dibayar, jenis lain", "+ unpaid, other kinds", "+ terbit sebelum periode ini", "+ issued before these months",
	"± selisih lain", "± other differences"}}

// The SQL's {as_of}, {start}, {next}, {window_start} are the as-of date, the first of its month
// and the day after it (local dates in Asia/Jakarta), and the first day of the last 90;
// {ADD_ON} and the like a code's word in the locale.

var readerTables = []tableCase{{
	report:  "credit",
	heading: loc{"id": "Produk · Dompet", "en": "Product · Wallet"},
	cols: []loc{{"id": "Pelanggan", "en": "Customers"}, {"id": "Saldo awal", "en": "Opening"},
		{"id": "Kredit", "en": "Credits"}, {"id": "Debit", "en": "Debits"}, {"id": "Saldo akhir", "en": "Closing"}},
	tol: []float64{0, 0.5, 0.5, 0.5, 0.5},
	sql: `WITH l AS (
    SELECT * FROM credit_ledger WHERE created_at < timezone('Asia/Jakarta', TIMESTAMP '{next}')
), w AS (
    SELECT account, product_id, wallet_type, customer_id,
           coalesce(sum(credit - debit) FILTER (WHERE created_at < timezone('Asia/Jakarta', TIMESTAMP '{start}')), 0) AS opening,
           coalesce(sum(credit) FILTER (WHERE created_at >= timezone('Asia/Jakarta', TIMESTAMP '{start}')), 0) AS credits,
           coalesce(sum(debit) FILTER (WHERE created_at >= timezone('Asia/Jakarta', TIMESTAMP '{start}')), 0) AS debits,
           sum(credit - debit) AS closing
    FROM l GROUP BY ALL
)
SELECT p.name || ' · ' || CASE w.wallet_type WHEN 'ADD_ON' THEN '{ADD_ON}' WHEN 'MEMBERSHIP' THEN '{MEMBERSHIP}' ELSE w.wallet_type END,
       w.product_id, count(DISTINCT w.customer_id), sum(w.opening), sum(w.credits), sum(w.debits), sum(w.closing)
FROM w LEFT JOIN products p ON p.account = w.account AND p.id = w.product_id
GROUP BY ALL`,
	total:     loc{"id": "Semua produk", "en": "All products"},
	adds:      []bool{false, true, true, true, true}, // a customer holding two products is one customer
	identity:  []int{1, 2, 3, 4},
	tab:       loc{"id": "Per produk", "en": "By product"},
	csv:       "by-product",
	labelCols: []loc{{"id": "Produk", "en": "Product"}, {"id": "Dompet", "en": "Wallet"}},
	idCol:     loc{"id": "ID produk", "en": "Product ID"},
	cut:       30,
}, {
	report:  "credit",
	heading: loc{"id": "Kemutakhiran mutasi", "en": "Ledger freshness"},
	cols: []loc{{"id": "Pelanggan", "en": "Customers"}, {"id": "Data tertua (hari)", "en": "Oldest copy (days)"},
		{"id": "Median (hari)", "en": "Median (days)"}, {"id": "Persentil 95 (hari)", "en": "95th percentile (days)"}},
	tol: []float64{0, 0.05, 0.05, 0.05},
	// No job journal in this world: a copy is never older than a reported balance.
	sql: `WITH c AS (
    SELECT customer_id FROM credit_ledger UNION SELECT customer_id FROM credit_fetch_state
), x AS (
    SELECT f.last_fetched_at,
           epoch(least(now(), timezone('Asia/Jakarta', TIMESTAMP '{next}')) - f.last_fetched_at) / 86400 AS days
    FROM c LEFT JOIN credit_fetch_state f USING (customer_id)
)
SELECT CASE WHEN last_fetched_at IS NULL THEN '{NEVER FETCHED}' ELSE '{OK}' END, NULL,
       count(*), max(days), median(days), quantile_cont(days, 0.95)
FROM x GROUP BY 1`,
	total:     loc{"id": "Semua", "en": "All"},
	adds:      []bool{true, false, false, false},
	tab:       loc{"id": "Ringkasan kemutakhiran", "en": "Freshness summary"},
	csv:       "freshness-summary",
	labelCols: []loc{{"id": "Kemutakhiran mutasi", "en": "Ledger freshness"}},
	cut:       30,
}}

var readerFigures = []figureCase{{
	report: "data-quality",
	label:  loc{"id": "Perbaikan e-mail", "en": "E-mail fixes"},
	// a customer's e-mail that is not an address, or that another customer of the account has
	// too (ignoring case and spaces around it)
	sql: `WITH c AS (
    SELECT account, id, email, lower(trim(email)) AS k FROM customers WHERE deleted_upstream_at IS NULL
)
SELECT count(*) FROM c
WHERE NOT coalesce(regexp_full_match(email, '[^@\s]+@[^@\s]+\.[A-Za-z]{2,}'), false)
   OR (k <> '' AND (SELECT count(*) FROM c c2 WHERE c2.account = c.account AND c2.k = c.k) > 1)`,
	csv: "e-mail-fixes",
	tab: loc{"id": "Perbaikan e-mail", "en": "E-mail fixes"},
}, {
	report: "data-quality",
	label:  loc{"id": "Dihapus di layanan (90 hari terakhir)", "en": "Deleted upstream (last 90 days)"},
	sql: `SELECT count(*) FROM record_changes WHERE field = '_deleted'
    AND observed_at >= timezone('Asia/Jakarta', TIMESTAMP '{window_start}') AND observed_at < timezone('Asia/Jakarta', TIMESTAMP '{next}')`,
	csv: "deleted-upstream",
	tab: loc{"id": "Dihapus di layanan", "en": "Deleted upstream"},
}, {
	report: "data-quality",
	label:  loc{"id": "Duplikat bertentangan (90 hari terakhir)", "en": "Conflicting duplicates (last 90 days)"},
	sql: `SELECT count(*) FROM data_quality_conflicts
    WHERE observed_at >= timezone('Asia/Jakarta', TIMESTAMP '{window_start}') AND observed_at < timezone('Asia/Jakarta', TIMESTAMP '{next}')`,
	csv: "conflicting-duplicates",
	tab: loc{"id": "Duplikat bertentangan", "en": "Conflicting duplicates"},
}, {
	report: "data-quality",
	label:  loc{"id": "Sinkronisasi gagal (50 terakhir per akun)", "en": "Failed sync runs (last 50 per account)"},
	sql: `SELECT count(*) FROM (
    SELECT status, row_number() OVER (PARTITION BY account ORDER BY started_at DESC, id DESC) AS n
    FROM sync_runs WHERE started_at < timezone('Asia/Jakarta', TIMESTAMP '{next}')
) WHERE n <= 50 AND status = 'failed'`,
	csv:   "sync-runs",
	tab:   loc{"id": "Riwayat sinkronisasi", "en": "Sync runs"},
	where: &struct{ col, value loc }{loc{"id": "Status", "en": "Status"}, loc{"id": "Gagal", "en": "Failed"}},
}}

// agingItems is what customers owe at the end of the as-of date, each item with its days
// overdue: every unpaid transaction, and the active invoices and unpaid or active payment
// requests the unpaid list never had; due = expiredAt, else created + 14 days (docs/reports.md).
// This world was synced once, so the figures as of the day before are the records as they are.
const agingItems = `WITH cut AS (SELECT timezone('Asia/Jakarta', TIMESTAMP '{next}') AS c),
items AS (
    SELECT u.account, u.customer_id, u.customer_name, u.customer_email, u.created_at, u.expired_at, u.amount
    FROM unpaid_transactions u, cut WHERE u.created_at < c AND (u.deleted_upstream_at IS NULL OR u.deleted_upstream_at >= c)
    UNION ALL
    SELECT i.account, i.customer_id, i.customer_name, i.customer_email, i.created_at, i.expired_at, i.amount
    FROM invoices i, cut WHERE i.created_at < c AND (i.deleted_upstream_at IS NULL OR i.deleted_upstream_at >= c) AND i.status = 'active'
      AND NOT EXISTS (SELECT 1 FROM unpaid_transactions x WHERE x.account = i.account AND x.payment_link_id = i.id)
    UNION ALL
    SELECT r.account, NULL, r.name, NULL, r.created_at, r.expired_at, r.amount
    FROM payment_requests r, cut WHERE r.created_at < c AND (r.deleted_upstream_at IS NULL OR r.deleted_upstream_at >= c) AND r.status IN ('unpaid', 'active')
      AND NOT EXISTS (SELECT 1 FROM unpaid_transactions x WHERE x.account = r.account AND x.payment_link_id = r.id)
),
aged AS (
    SELECT *, DATE '{as_of}' - (coalesce(expired_at, created_at + INTERVAL 14 DAY) AT TIME ZONE 'Asia/Jakarta')::DATE AS days FROM items
)
`

// agingBucket is the amount owed in a bucket of days overdue.
func agingBucket(cond string) string {
	return agingItems + "SELECT coalesce(sum(amount), 0) FROM aged WHERE " + cond
}

// reviewsAt are the reviews written by the end of the as-of date; webhooksAt the webhook
// deliveries of the 30 days up to it.
const (
	reviewsAt = `WITH r AS (SELECT * FROM reviews WHERE created_at < timezone('Asia/Jakarta', TIMESTAMP '{next}')
    AND (deleted_upstream_at IS NULL OR deleted_upstream_at >= timezone('Asia/Jakarta', TIMESTAMP '{next}')))
`
	webhooksAt = `WITH w AS (SELECT * FROM webhook_deliveries WHERE created_at < timezone('Asia/Jakarta', TIMESTAMP '{next}')
    AND created_at >= timezone('Asia/Jakarta', TIMESTAMP '{next}') - INTERVAL 30 DAY)
`
)

// collectionItems are the invoices and payment requests created in the 12 months up to the
// as-of date (from the first of the month 11 months before its month), each with its status at
// the end of that date (deleted: gone upstream by then).
const collectionItems = `WITH cut AS (SELECT timezone('Asia/Jakarta', TIMESTAMP '{next}') AS c, timezone('Asia/Jakarta', TIMESTAMP '{first_month}') AS f),
items AS (
    SELECT amount, CASE WHEN deleted_upstream_at < c THEN 'deleted' ELSE status END AS st
    FROM invoices, cut WHERE created_at >= f AND created_at < c
    UNION ALL
    SELECT amount, CASE WHEN deleted_upstream_at < c THEN 'deleted' ELSE status END
    FROM payment_requests, cut WHERE created_at >= f AND created_at < c
)
`

func collected(what, where string) string {
	return collectionItems + "SELECT " + what + " FROM items WHERE " + where
}

var moreFigures = []figureCase{
	{report: "collections", label: loc{"id": "Terbit", "en": "Issued"}, sql: collected("count(*)", "true")},
	{report: "collections", label: loc{"id": "Jumlah terbit", "en": "Issued amount"}, sql: collected("sum(amount)", "true")},
	{report: "collections", label: loc{"id": "Lunas", "en": "Paid"}, sql: collected("count(*)", "st = 'paid'")},
	{report: "collections", label: loc{"id": "Jumlah lunas", "en": "Paid amount"}, sql: collected("coalesce(sum(amount), 0)", "st = 'paid'")},
	{report: "collections", label: loc{"id": "Tertagih %", "en": "Collected %"},
		sql: collected("coalesce(sum(amount) FILTER (WHERE st = 'paid'), 0) / sum(amount)", "true")},
	{report: "collections", label: loc{"id": "Ditutup tanpa bayar", "en": "Closed unpaid"}, sql: collected("count(*)", "st = 'closed'")},
	{report: "collections", label: loc{"id": "Jumlah ditutup tanpa bayar", "en": "Closed unpaid amount"}, sql: collected("coalesce(sum(amount), 0)", "st = 'closed'")},
	{report: "collections", label: loc{"id": "Terbuka", "en": "Open"}, sql: collected("count(*)", "st IN ('active', 'unpaid')")},
	{report: "collections", label: loc{"id": "Jumlah terbuka", "en": "Open amount"}, sql: collected("coalesce(sum(amount), 0)", "st IN ('active', 'unpaid')")},
	// the first line against aging is the open amount again
	{report: "collections", label: loc{"id": "Terbuka di sini", "en": "Open here"}, sql: collected("coalesce(sum(amount), 0)", "st IN ('active', 'unpaid')")},
	{report: "collections", label: loc{"id": "Dihapus", "en": "Deleted"}, sql: collected("count(*)", "st = 'deleted'")},
	{report: "collections", label: loc{"id": "Jumlah dihapus", "en": "Deleted amount"}, sql: collected("coalesce(sum(amount), 0)", "st = 'deleted'")},
	{report: "collections", label: loc{"id": "Jumlah ditutup atau dihapus", "en": "Closed or deleted amount"},
		sql: collected("coalesce(sum(amount), 0)", "st IN ('closed', 'deleted')")},
	{report: "aging", label: loc{"id": "Jumlah pelanggan", "en": "Customers"},
		sql: agingItems + "SELECT count(*) FROM (SELECT DISTINCT account, customer_name, customer_email, customer_id FROM aged)"},
	{report: "aging", label: loc{"id": "Item terbuka", "en": "Open items"}, sql: agingItems + "SELECT count(*) FROM aged"},
	{report: "aging", label: loc{"id": "Belum jatuh tempo", "en": "Current"}, sql: agingBucket("days <= 0")},
	{report: "aging", label: loc{"id": "1-30 hari", "en": "1-30 days"}, sql: agingBucket("days BETWEEN 1 AND 30")},
	{report: "aging", label: loc{"id": "31-60 hari", "en": "31-60 days"}, sql: agingBucket("days BETWEEN 31 AND 60")},
	{report: "aging", label: loc{"id": "61-90 hari", "en": "61-90 days"}, sql: agingBucket("days BETWEEN 61 AND 90")},
	{report: "aging", label: loc{"id": "Lebih dari 90 hari", "en": "Over 90 days"}, sql: agingBucket("days > 90")},
	{report: "aging", label: loc{"id": "Total terutang", "en": "Outstanding"}, sql: agingBucket("true")},
	// collections restates aging's outstanding under its own lines
	{report: "collections", label: loc{"id": "= Total terutang, umur piutang", "en": "= Outstanding in aging"}, sql: agingBucket("true")},
	{report: "reviews", label: loc{"id": "Produk diulas", "en": "Products reviewed"},
		sql: reviewsAt + "SELECT count(*) FROM (SELECT DISTINCT account, product_name, product_type, payment_link_id FROM r)"},
	{report: "reviews", label: loc{"id": "Jumlah ulasan", "en": "Reviews"}, sql: reviewsAt + "SELECT count(*) FROM r"},
	// the average of the products' averages (each printed to 2 decimals), weighted by their reviews
	{report: "reviews", label: loc{"id": "Nilai rata-rata", "en": "Average rating"}, sql: reviewsAt + "SELECT avg(rating) FROM r", tol: 0.01},
	{report: "reviews", label: loc{"id": "1 bintang", "en": "1 star"}, sql: reviewsAt + "SELECT count(*) FROM r WHERE round(rating) = 1"},
	{report: "reviews", label: loc{"id": "2 bintang", "en": "2 stars"}, sql: reviewsAt + "SELECT count(*) FROM r WHERE round(rating) = 2"},
	{report: "reviews", label: loc{"id": "3 bintang", "en": "3 stars"}, sql: reviewsAt + "SELECT count(*) FROM r WHERE round(rating) = 3"},
	{report: "reviews", label: loc{"id": "4 bintang", "en": "4 stars"}, sql: reviewsAt + "SELECT count(*) FROM r WHERE round(rating) = 4"},
	{report: "reviews", label: loc{"id": "5 bintang", "en": "5 stars"}, sql: reviewsAt + "SELECT count(*) FROM r WHERE round(rating) = 5"},
	{report: "reviews", label: loc{"id": "4-5 bintang %", "en": "4-5 stars %"},
		sql: reviewsAt + "SELECT count(*) FILTER (WHERE round(rating) >= 4) / count(*) FROM r"},
	{report: "webhooks", label: loc{"id": "Jumlah pengiriman", "en": "Deliveries"}, sql: webhooksAt + "SELECT count(*) FROM w"},
	{report: "webhooks", label: loc{"id": "Berhasil", "en": "Succeeded"}, sql: webhooksAt + "SELECT count(*) FROM w WHERE status = 'SUCCESS'"},
	{report: "webhooks", label: loc{"id": "Gagal", "en": "Failed"}, sql: webhooksAt + "SELECT count(*) FROM w WHERE status = 'FAILED'"},
	{report: "webhooks", label: loc{"id": "Tertunda", "en": "Pending"}, sql: webhooksAt + "SELECT count(*) FROM w WHERE status NOT IN ('SUCCESS', 'FAILED')"},
	{report: "webhooks", label: loc{"id": "Tingkat keberhasilan", "en": "Success rate"},
		sql: webhooksAt + "SELECT count(*) FILTER (WHERE status = 'SUCCESS') / count(*) FILTER (WHERE status IN ('SUCCESS', 'FAILED')) FROM w"},
	{report: "webhooks", label: loc{"id": "Percobaan ulang terjadwal", "en": "Retries scheduled"},
		sql: webhooksAt + "SELECT count(*) FROM w WHERE next_delivery IS NOT NULL AND status <> 'SUCCESS'"},
}

// sumCase: figures of a summary that add up to another of its figures.
type sumCase struct {
	report string
	parts  []loc
	total  loc
}

var readerSums = []sumCase{
	{report: "aging", parts: []loc{{"id": "Belum jatuh tempo", "en": "Current"}, {"id": "1-30 hari", "en": "1-30 days"},
		{"id": "31-60 hari", "en": "31-60 days"}, {"id": "61-90 hari", "en": "61-90 days"}, {"id": "Lebih dari 90 hari", "en": "Over 90 days"}},
		total: loc{"id": "Total terutang", "en": "Outstanding"}},
	{report: "reviews", parts: []loc{{"id": "1 bintang", "en": "1 star"}, {"id": "2 bintang", "en": "2 stars"}, {"id": "3 bintang", "en": "3 stars"},
		{"id": "4 bintang", "en": "4 stars"}, {"id": "5 bintang", "en": "5 stars"}}, total: loc{"id": "Jumlah ulasan", "en": "Reviews"}},
	{report: "webhooks", parts: []loc{{"id": "Berhasil", "en": "Succeeded"}, {"id": "Gagal", "en": "Failed"}, {"id": "Tertunda", "en": "Pending"}},
		total: loc{"id": "Jumlah pengiriman", "en": "Deliveries"}},
	{report: "collections", parts: []loc{{"id": "Terbuka di sini", "en": "Open here"}, {"id": "+ belum dibayar, jenis lain", "en": "+ unpaid, other kinds"},
		{"id": "+ terbit sebelum periode ini", "en": "+ issued before these months"}, {"id": "± selisih lain", "en": "± other differences"}},
		total: loc{"id": "= Total terutang, umur piutang", "en": "= Outstanding in aging"}},
}

// sqlText is a case's SQL for the locale, as of readerAsOf.
func sqlText(q, locale string) string { return sqlTextAt(q, locale, readerAsOf) }

// sqlTextAt is a case's SQL for the locale as of asOf (the month in the life reads each
// message as of its own date).
func sqlTextAt(q, locale string, asOf time.Time) string {
	next := asOf.AddDate(0, 0, 1)
	r := []string{
		"{as_of}", asOf.Format(time.DateOnly),
		"{next}", next.Format(time.DateOnly),
		"{start}", time.Date(asOf.Year(), asOf.Month(), 1, 0, 0, 0, 0, time.UTC).Format(time.DateOnly),
		"{window_start}", next.AddDate(0, 0, -90).Format(time.DateOnly),
		"{first_month}", time.Date(asOf.Year(), asOf.Month()-11, 1, 0, 0, 0, 0, time.UTC).Format(time.DateOnly),
	}
	for code, w := range readerWords {
		r = append(r, "{"+code+"}", strings.ReplaceAll(w[locale], "'", "''"))
	}
	return strings.NewReplacer(r...).Replace(q)
}

// srcRow is a row of a case's SQL: its label, its ID, its figures.
type srcRow struct {
	label, id string
	figs      []float64
	used      bool
}

func querySource(t *testing.T, db *sql.DB, q string) []srcRow {
	t.Helper()
	rows, err := db.Query(q)
	if err != nil {
		t.Fatalf("%v\n%s", err, q)
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	var out []srcRow
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		r := srcRow{label: fmt.Sprint(vals[0])}
		if vals[1] != nil {
			r.id = fmt.Sprint(vals[1])
		}
		for _, v := range vals[2:] {
			f, err := strconv.ParseFloat(fmt.Sprint(v), 64)
			if err != nil && v != nil {
				t.Fatalf("%v: not a number", v)
			}
			r.figs = append(r.figs, f)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// cellText is a cell as read: a number cell's raw value (exact) or text as printed.
type cellText struct {
	text  string
	exact bool // a typed number: text is its raw value
}

// readTable is a table as a person reads it: a heading row, rows of a label and figures, the
// totals row, and the line saying where the rows left out are.
type readTable struct {
	head  []string
	rows  [][]cellText // each: the label, then the figures
	total []cellText
	more  string
}

// reading is what a deliverable's headline says: figures by label, tables by heading.
type reading struct {
	where   string
	figures map[string]cellText
	tables  map[string]*readTable
}

func newReading(where string) *reading {
	return &reading{where: where, figures: map[string]cellText{}, tables: map[string]*readTable{}}
}

var spaces = regexp.MustCompile(`\s{2,}`)

// splitPadded splits a line of space-padded columns (a table as one text cell or a text line).
func splitPadded(s string) []string {
	return spaces.Split(strings.TrimSpace(s), -1)
}

// readSummary reads a workbook's summary sheet: the rows under the headline heading up to the
// checks' heading (or the notes'). A table starts at a row whose label is a known heading.
func readSummary(t *testing.T, path, locale string, headings []string) *reading {
	t.Helper()
	f, err := excelize.OpenFile(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sh := f.GetSheetList()[0]
	rows, err := f.GetRows(sh, excelize.Options{RawCellValue: true})
	if err != nil {
		t.Fatal(err)
	}
	rd := newReading(filepath.Base(path) + " " + sh)
	cell := func(r, c int) cellText {
		name, _ := excelize.CoordinatesToCellName(c+1, r+1)
		typ, _ := f.GetCellType(sh, name)
		return cellText{text: rows[r][c], exact: typ != excelize.CellTypeSharedString && typ != excelize.CellTypeInlineString && typ != excelize.CellTypeFormula}
	}
	in := false
	var cur *readTable
	for i, r := range rows {
		if len(r) == 0 {
			cur = nil
			continue
		}
		switch {
		case r[0] == readerWords["headline"][locale]:
			in = true
			continue
		case !in:
			continue
		case r[0] == readerWords["checks"][locale] || r[0] == readerWords["notes"][locale] || r[0] == readerWords["sheets"][locale]:
			return rd // the headline has ended
		case len(r) == 1 && !slices.Contains(headings, r[0]):
			cur = nil // a headline sheet's name over its lines
			continue
		}
		var cells []cellText
		for c := range r {
			cells = append(cells, cell(i, c))
		}
		if slices.Contains(headings, r[0]) {
			cur = &readTable{head: r}
			if len(r) == 2 && !cells[1].exact { // the titles in one text cell
				cur.head = append([]string{r[0]}, splitPadded(r[1])...)
			}
			rd.tables[r[0]] = cur
			continue
		}
		if len(cells) == 2 && !cells[1].exact && len(splitPadded(r[1])) > 1 {
			// a table's row as one text cell of space-padded figures
			cells = cells[:1]
			for _, s := range splitPadded(r[1]) {
				cells = append(cells, cellText{text: s})
			}
		}
		switch {
		case cur != nil && r[0] == "…":
			cur.more = r[1]
		case cur != nil:
			cur.rows = append(cur.rows, cells)
		case len(cells) >= 2:
			rd.figures[r[0]] = cells[1]
		}
	}
	return rd
}

// readDataSheet reads a data sheet as a table: its heading row, rows, the totals row by its label.
func readDataSheet(t *testing.T, path, tab, totalLabel string) ([]string, []map[string]cellText, map[string]cellText) {
	t.Helper()
	f, err := excelize.OpenFile(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := f.GetRows(tab, excelize.Options{RawCellValue: true})
	if err != nil {
		t.Fatalf("%s: sheet %q: %v", filepath.Base(path), tab, err)
	}
	if len(rows) == 0 {
		t.Fatalf("%s: sheet %q is empty", filepath.Base(path), tab)
	}
	head := rows[0]
	var body []map[string]cellText
	var total map[string]cellText
	for i, r := range rows[1:] {
		if len(r) == 0 || len(r) == 1 && strings.HasPrefix(r[0], "(") && strings.HasSuffix(r[0], ")") {
			continue // "(tidak ada baris)": the sheet says it has none
		}
		m := map[string]cellText{}
		for c, v := range r {
			if c < len(head) {
				name, _ := excelize.CoordinatesToCellName(c+1, i+2)
				typ, _ := f.GetCellType(tab, name)
				m[head[c]] = cellText{text: v, exact: typ != excelize.CellTypeSharedString && typ != excelize.CellTypeInlineString}
			}
		}
		if totalLabel != "" && r[0] == totalLabel {
			total = m
			continue
		}
		if strings.HasPrefix(r[0], "Periksa") || strings.HasPrefix(r[0], "Check") {
			continue // the check row under the table
		}
		body = append(body, m)
	}
	return head, body, total
}

// readCSV reads a CSV in its dialect: rfc (commas, a point for decimals) or id (semicolons,
// decimal commas).
func readCSV(t *testing.T, path, dialect string) ([]string, []map[string]cellText) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	r := csv.NewReader(strings.NewReader(strings.TrimPrefix(string(b), "\ufeff")))
	if dialect == "id" {
		r.Comma = ';'
	}
	recs, err := r.ReadAll()
	if err != nil {
		t.Fatalf("%s: %v", filepath.Base(path), err)
	}
	var out []map[string]cellText
	for _, rec := range recs[1:] {
		m := map[string]cellText{}
		for i, v := range rec {
			// a CSV's numbers are plain: no thousands separator; the id dialect's decimal comma
			if dialect == "id" {
				v = strings.Replace(v, ",", ".", 1)
			}
			m[recs[0][i]] = cellText{text: v, exact: true}
		}
		out = append(out, m)
	}
	return recs[0], out
}

// readMessage parses an .eml: its text and HTML parts and its attachments (written to dir).
func readMessage(t *testing.T, path, dir string) (text, htmlPart string, files map[string]string) {
	t.Helper()
	fh, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	m, err := mail.ReadMessage(fh)
	if err != nil {
		t.Fatal(err)
	}
	files = map[string]string{}
	var walk func(ct string, body io.Reader, enc string)
	walk = func(ct string, body io.Reader, enc string) {
		mt, params, err := mimetype.ParseMediaType(ct)
		if err != nil {
			t.Fatalf("%s: content type %q: %v", filepath.Base(path), ct, err)
		}
		if strings.HasPrefix(mt, "multipart/") {
			mr := multipart.NewReader(body, params["boundary"])
			for {
				p, err := mr.NextRawPart()
				if err == io.EOF {
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				walk(p.Header.Get("Content-Type"), p, p.Header.Get("Content-Transfer-Encoding"))
				if name := p.FileName(); name != "" {
					continue
				}
			}
		}
		b := decodeBody(t, body, enc)
		switch {
		case mt == "text/plain" && !strings.Contains(ct, "name="):
			text = string(b)
		case mt == "text/html":
			htmlPart = string(b)
		default:
			name := params["name"]
			if name == "" {
				return
			}
			p := filepath.Join(dir, name)
			if err := os.WriteFile(p, b, 0o644); err != nil {
				t.Fatal(err)
			}
			files[name] = p
		}
	}
	walk(m.Header.Get("Content-Type"), m.Body, m.Header.Get("Content-Transfer-Encoding"))
	return text, htmlPart, files
}

// readTextPart reads a report's headline in the text part: "  label: value" lines, and a
// table as lines of padded columns under "  sheet:", figures right-aligned under their titles.
func readTextPart(text, title, locale string, headings []string) *reading {
	rd := newReading("text part: " + title)
	defer func() {
		for k, tb := range rd.tables {
			if tb.head == nil {
				delete(rd.tables, k) // a heading of lines, not of a table
			}
		}
	}()
	lines := strings.Split(strings.ReplaceAll(text, "\r\n", "\n"), "\n")
	start := slices.Index(lines, "== "+title+" ==")
	if start < 0 {
		return rd
	}
	in := false
	var cur *readTable
	var edges []int // the right edge of each column's title
	for _, ln := range lines[start+1:] {
		switch {
		case strings.HasPrefix(ln, "== "):
			return rd
		case ln == readerWords["headline"][locale]+":":
			in = true
			continue
		case !in:
			continue
		case !strings.HasPrefix(ln, "  "): // the next section
			return rd
		}
		body := strings.TrimPrefix(ln, "  ")
		if cur != nil && strings.HasPrefix(body, "  ") {
			row := []rune(strings.TrimPrefix(body, "  "))
			if cur.head == nil {
				for _, h := range headings {
					if strings.HasPrefix(string(row), h) {
						// each title ends where its figures end (they are aligned right)
						rest := row[len([]rune(h)):]
						cur.head = append([]string{h}, splitPadded(string(rest))...)
						edges = titleEdges(rest, len([]rune(h)))
					}
				}
				continue
			}
			if strings.Trim(string(row), "-") == "" {
				continue // the rule over the totals row
			}
			cells := columnsByEdge(row, edges)
			if cells == nil {
				cur.more = string(row)
				continue
			}
			cur.rows = append(cur.rows, cells)
			continue
		}
		cur = nil
		label, value, _ := strings.Cut(body, ": ")
		if strings.HasSuffix(body, ":") { // a table's sheet name: its lines follow
			cur = &readTable{}
			rd.tables[strings.TrimSuffix(body, ":")] = cur
			continue
		}
		rd.figures[label] = cellText{text: value}
	}
	return rd
}

// titleEdges is where each title of a heading ends (rest: the heading after the label
// column's title, off: its position in the line): titles are apart by two spaces or more.
func titleEdges(rest []rune, off int) []int {
	var edges []int
	for _, loc := range spaces.FindAllStringIndex(string(rest)+"  ", -1) {
		if end := len([]rune(string(rest)[:loc[0]])); end > 0 {
			edges = append(edges, off+end)
		}
	}
	return edges
}

// columnsByEdge cuts a line of a text table: the label up to the first run of two spaces (a
// label has single spaces only), then each figure ending at its title's right edge, as figures
// are aligned right under their titles (nil: not such a line).
func columnsByEdge(row []rune, edges []int) []cellText {
	if len(edges) == 0 || len(row) > edges[len(edges)-1] {
		return nil
	}
	i := strings.Index(string(row), "  ")
	if i < 0 {
		return nil
	}
	labelEnd := len([]rune(string(row)[:i]))
	if labelEnd > edges[0] {
		return nil
	}
	cells := []cellText{{text: string(row[:labelEnd])}}
	prev := labelEnd
	for _, e := range edges {
		if e > len(row) {
			e = len(row)
		}
		cells = append(cells, cellText{text: strings.TrimSpace(string(row[prev:e]))})
		prev = e
	}
	return cells
}

// readHTMLPart reads a report's headline in the HTML part: the section under its <h2>, a
// two-cell row is a figure, a table with a heading row (<th>) a table, its <tfoot> the totals.
func readHTMLPart(t *testing.T, doc, title, locale string) *reading {
	t.Helper()
	rd := newReading("HTML part: " + title)
	root, err := html.Parse(strings.NewReader(doc))
	if err != nil {
		t.Fatal(err)
	}
	var textOf func(n *html.Node) string
	textOf = func(n *html.Node) string {
		if n.Type == html.TextNode {
			return n.Data
		}
		var b strings.Builder
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			if c.Type == html.ElementNode && c.Data == "table" {
				continue
			}
			b.WriteString(textOf(c))
		}
		return strings.TrimSpace(b.String())
	}
	// rows of a table, not of the tables inside it, with whether each is in its <tfoot>
	var rowsOf func(n *html.Node, foot bool, out *[]*html.Node, feet *[]bool)
	rowsOf = func(n *html.Node, foot bool, out *[]*html.Node, feet *[]bool) {
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			if c.Type != html.ElementNode {
				continue
			}
			switch c.Data {
			case "tr":
				*out = append(*out, c)
				*feet = append(*feet, foot)
			case "thead", "tbody", "tfoot":
				rowsOf(c, c.Data == "tfoot", out, feet)
			}
		}
	}
	cellsOf := func(tr *html.Node) (cells []string, th bool) {
		for c := tr.FirstChild; c != nil; c = c.NextSibling {
			if c.Type == html.ElementNode && (c.Data == "td" || c.Data == "th") {
				cells = append(cells, textOf(c))
				th = th || c.Data == "th"
			}
		}
		return cells, th
	}
	section, part := "", ""
	var walk func(n *html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode {
			switch n.Data {
			case "h2":
				section, part = textOf(n), ""
			case "h3":
				part = textOf(n)
			case "table":
				if section != title || part != readerWords["headline"][locale] {
					break
				}
				var trs []*html.Node
				var feet []bool
				rowsOf(n, false, &trs, &feet)
				var cur *readTable
				for k, tr := range trs {
					cells, th := cellsOf(tr)
					switch {
					case th:
						cur = &readTable{head: cells}
						rd.tables[cells[0]] = cur
					case cur != nil && feet[k]:
						cur.total = cellTexts(cells)
					case cur != nil:
						cur.rows = append(cur.rows, cellTexts(cells))
					case len(cells) == 2 && cells[1] != "": // (a heading of lines has no figure)
						rd.figures[cells[0]] = cellText{text: cells[1]}
					}
				}
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(root)
	return rd
}

func cellTexts(cells []string) []cellText {
	var out []cellText
	for _, c := range cells {
		out = append(out, cellText{text: c})
	}
	return out
}

func decodeBody(t *testing.T, r io.Reader, enc string) []byte {
	t.Helper()
	switch strings.ToLower(enc) {
	case "base64":
		r = base64.NewDecoder(base64.StdEncoding, r)
	case "quoted-printable":
		r = quotedprintable.NewReader(r)
	}
	b, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// number is a figure as a reader reads it: an exact cell, or text in the locale ("14.980.728",
// "1,0", "-" for nothing); tol is half the printed unit.
func number(c cellText, locale string) (v, tol float64, err error) {
	s := strings.TrimSpace(c.text)
	if c.exact {
		v, err = strconv.ParseFloat(s, 64)
		return v, 1e-6, err
	}
	if s == "-" || s == "Rp -" {
		return 0, 0, nil
	}
	s = strings.TrimPrefix(s, "Rp ")
	if p, ok := strings.CutSuffix(s, "%"); ok {
		v, tol, err = number(cellText{text: p}, locale)
		return v / 100, tol / 100, err
	}
	thousands, dec := ".", ","
	if locale == "en" {
		thousands, dec = ",", "."
	}
	s = strings.ReplaceAll(s, thousands, "")
	s = strings.Replace(s, dec, ".", 1)
	if i := strings.Index(s, "."); i >= 0 {
		tol = 0.5 * math.Pow(10, -float64(len(s)-i-1))
	} else {
		tol = 0.5
	}
	v, err = strconv.ParseFloat(s, 64)
	return v, tol, err
}

var tellApart = regexp.MustCompile(` \(([^()…]+)…\)`)

// matchRow finds the source row a read label names: the same words, and where the reader is
// shown the start of an ID (two products of one name), the row whose ID starts so. A label
// naming no row, or more than one, is a failure.
func matchRow(src []srcRow, label string) (*srcRow, error) {
	prefix := ""
	if m := tellApart.FindStringSubmatch(label); m != nil {
		prefix = m[1]
		label = strings.Replace(label, m[0], "", 1)
	}
	var found []*srcRow
	for i := range src {
		if src[i].label == label && strings.HasPrefix(src[i].id, prefix) {
			found = append(found, &src[i])
		}
	}
	switch len(found) {
	case 0:
		return nil, fmt.Errorf("row %q: no such row in the warehouse", label)
	case 1:
		return found[0], nil
	}
	return nil, fmt.Errorf("row %q: names %d rows of the warehouse, a reader cannot tell which", label, len(found))
}

// checkTable compares a read table with its source, row by row: labels, figures under their
// titles, no row missing, the totals row adding up, and the case's identity.
func checkTable(t *testing.T, where string, tc tableCase, locale string, rt *readTable, src []srcRow, headlineCut, hasTotal bool) {
	t.Helper()
	if rt == nil {
		t.Errorf("%s: no table %q", where, tc.heading[locale])
		return
	}
	col := make([]int, len(tc.cols))
	for k, c := range tc.cols {
		col[k] = slices.Index(rt.head, c[locale])
		if col[k] < 0 {
			t.Errorf("%s: table %q has no column %q (heading %q)", where, tc.heading[locale], c[locale], rt.head)
			return
		}
	}
	for i := range src {
		src[i].used = false
	}
	sums := make([]float64, len(tc.cols))
	tols := make([]float64, len(tc.cols))
	for _, r := range rt.rows {
		label := r[0].text
		if tc.total != nil && label == tc.total[locale] {
			rt.total = r
			continue
		}
		s, err := matchRow(src, label)
		if err != nil {
			t.Errorf("%s: %v", where, err)
			continue
		}
		if s.used {
			t.Errorf("%s: row %q twice", where, label)
		}
		s.used = true
		var got []float64
		for k, c := range tc.cols {
			if col[k] >= len(r) {
				t.Errorf("%s: %s: no %s", where, label, c[locale])
				return
			}
			v, tol, err := number(r[col[k]], locale)
			if err != nil {
				t.Errorf("%s: %s: %s %q: %v", where, label, c[locale], r[col[k]].text, err)
				continue
			}
			if math.Abs(v-s.figs[k]) > max(tol, tc.tol[k]) {
				t.Errorf("%s: %s: %s %v, the warehouse says %v", where, label, c[locale], r[col[k]].text, s.figs[k])
			}
			sums[k] += v
			tols[k] += tol
			got = append(got, v)
		}
		if id := tc.identity; id != nil && len(got) == len(tc.cols) {
			if d := got[id[0]] + got[id[1]] - got[id[2]] - got[id[3]]; math.Abs(d) > tols[0]+2 {
				t.Errorf("%s: %s: %s + %s - %s - %s = %v, not 0", where, label, tc.cols[id[0]][locale], tc.cols[id[1]][locale], tc.cols[id[2]][locale], tc.cols[id[3]][locale], d)
			}
		}
	}
	shown := 0
	for _, s := range src {
		if s.used {
			shown++
		}
	}
	missing := len(src) - shown
	if headlineCut && len(src) > tc.cut {
		missing = tc.cut - shown
		if rt.more == "" {
			t.Errorf("%s: %d rows shown of %d, and nothing says where the rest are", where, shown, len(src))
		}
	}
	if missing > 0 {
		for _, s := range src {
			if !s.used {
				t.Errorf("%s: no row for %q (id %s): %v", where, s.label, s.id, s.figs)
			}
		}
	}
	if tc.total == nil || !hasTotal {
		return
	}
	if rt.total == nil {
		t.Errorf("%s: no totals row %q", where, tc.total[locale])
		return
	}
	all := missing <= 0 && shown == len(src)
	for k, c := range tc.cols {
		if !tc.adds[k] {
			continue
		}
		if col[k] >= len(rt.total) {
			t.Errorf("%s: %s: no %s", where, tc.total[locale], c[locale])
			continue
		}
		v, tol, err := number(rt.total[col[k]], locale)
		if err != nil {
			t.Errorf("%s: %s: %s %q: %v", where, tc.total[locale], c[locale], rt.total[col[k]].text, err)
			continue
		}
		want := 0.0
		for _, s := range src {
			want += s.figs[k]
		}
		if math.Abs(v-want) > max(tol, tc.tol[k]) {
			t.Errorf("%s: %s: %s %s, the warehouse says %v", where, tc.total[locale], c[locale], rt.total[col[k]].text, want)
		}
		if all && math.Abs(v-sums[k]) > tol+tols[k] {
			t.Errorf("%s: %s: %s %s does not add up: the rows above sum to %v", where, tc.total[locale], c[locale], rt.total[col[k]].text, sums[k])
		}
	}
}

// TestReaderChecksWhatPeopleRead delivers the credit and data-quality reports in each locale
// into the outbox, reads each message (text, HTML, the attached workbook and CSVs) and the CSVs
// of the id dialect, and compares every headline figure and table with this file's SQL.
func TestReaderChecksWhatPeopleRead(t *testing.T) {
	db := testWarehouse(t)
	if _, err := os.Stat(filepath.Join(filepath.Dir(db), "billsync-jobs.duckdb")); err == nil {
		t.Fatal("the world has a job journal: the freshness SQL here assumes none")
	}
	// The SQL reads a copy: a handle open on the warehouse itself would keep DuckDB's instance
	// of it, and what a report attaches to it, alive between the reports' runs.
	mine := filepath.Join(t.TempDir(), "copy.duckdb")
	if err := copyFile(db, mine); err != nil {
		t.Fatal(err)
	}
	conn, err := duckfile.OpenReadOnly(mine)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ctx := context.Background()
	for _, locale := range []string{"id", "en"} {
		t.Run(locale, func(t *testing.T) {
			o := testOptions(t, db)
			d := testDelivery(t, fmt.Sprintf(`deliveries:
  - name: reader-%s
    reports: [%s]
    schedule: "0 7 * * *"
    as_of: yesterday
    format: both
    locale: %s
    max_attach_mb: 50
    to: [finance@toko.example]
`, locale, strings.Join(everyFigure, ", "), locale))
			res, err := Deliver(ctx, o, Occurrence{Delivery: d, AsOf: readerAsOf})
			if err != nil || res.EML == "" {
				t.Fatalf("%v %+v", err, res)
			}
			eml := res.EML
			text, htmlPart, files := readMessage(t, eml, t.TempDir())
			if text == "" || htmlPart == "" {
				t.Fatalf("%s: no text or no HTML part", filepath.Base(eml))
			}
			// The id dialect's CSVs, made as report -csv-dialect id makes them.
			idDir := t.TempDir()
			idFiles, err := report.Generate(ctx, report.Options{Report: config.Report{Locale: locale, CSVDialect: "id", ReportsOut: idDir, TZ: config.MustZone("Asia/Jakarta")},
				DB: db, Formats: []string{"csv"}, AsOf: readerAsOf, Names: []string{"credit", "data-quality"}, Log: quiet})
			if err != nil {
				t.Fatal(err)
			}
			base := func(rep string) string { return rep + "_" + readerAsOf.Format(time.DateOnly) }
			workbook := func(rep string) string {
				for name, p := range files {
					if strings.HasPrefix(name, base(rep)) && strings.HasSuffix(name, ".xlsx") {
						return p
					}
				}
				return ""
			}
			var headings []string
			for _, tc := range readerTables {
				headings = append(headings, tc.heading[locale])
			}
			readings := map[string][]*reading{}
			for rep, title := range reportTitles {
				wb := workbook(rep)
				if wb == "" {
					t.Fatalf("%s: no %s.xlsx attached (attached: %v)", filepath.Base(eml), base(rep), files)
				}
				readings[rep] = []*reading{
					readSummary(t, wb, locale, headings),
					readTextPart(text, title[locale], locale, headings),
					readHTMLPart(t, htmlPart, title[locale], locale),
				}
			}
			for _, tc := range readerTables {
				src := querySource(t, conn, sqlText(tc.sql, locale))
				if len(src) == 0 {
					t.Fatalf("%s: the warehouse has no rows: the case proves nothing", tc.heading[locale])
				}
				for _, rd := range readings[tc.report] {
					checkTable(t, rd.where, tc, locale, rd.tables[lookup(rd, tc.heading[locale], tc.tab[locale])], src, true, true)
				}
				// The data sheet and the CSVs list every row, with the same labels.
				wb := workbook(tc.report)
				head, body, total := readDataSheet(t, wb, tc.tab[locale], tc.total[locale])
				checkTable(t, filepath.Base(wb)+" "+tc.tab[locale], tc, locale, asTable(head, body, total, tc, locale), src, false, true)
				for _, c := range []struct{ dialect, path string }{
					{"rfc", files[base(tc.report)+"_"+tc.csv+".csv"]},
					{"id", filepath.Join(idDir, base(tc.report)+"_"+tc.csv+".csv")},
				} {
					if !slices.Contains(append(idFiles, files[base(tc.report)+"_"+tc.csv+".csv"]), c.path) || c.path == "" {
						t.Errorf("no %s CSV %s_%s.csv", c.dialect, base(tc.report), tc.csv)
						continue
					}
					head, body := readCSV(t, c.path, c.dialect)
					checkTable(t, filepath.Base(c.path)+" ("+c.dialect+")", tc, locale, asTable(head, body, nil, tc, locale), src, false, false)
				}
			}
			checked := map[string]bool{} // report + label of each figure and table a case checks
			for _, tc := range readerTables {
				checked[tc.report+"\x00"+tc.heading[locale]] = true
				checked[tc.report+"\x00"+tc.tab[locale]] = true
			}
			for _, fc := range append(slices.Clone(readerFigures), moreFigures...) {
				checked[fc.report+"\x00"+fc.label[locale]] = true
				src := querySource(t, conn, "SELECT NULL, NULL, ("+sqlText(fc.sql, locale)+")")
				want := src[0].figs[0]
				for _, rd := range readings[fc.report] {
					got, ok := rd.figures[fc.label[locale]]
					if !ok {
						t.Errorf("%s: no figure %q (figures: %v)", rd.where, fc.label[locale], keys(rd.figures))
						continue
					}
					if v, tol, err := number(got, locale); err != nil || math.Abs(v-want) > max(tol, fc.tol) {
						t.Errorf("%s: %s %q, the warehouse says %v", rd.where, fc.label[locale], got.text, want)
					}
				}
				if fc.csv == "" {
					continue
				}
				// the sheet it counts, and its CSVs, list as many rows
				_, body, _ := readDataSheet(t, workbook(fc.report), fc.tab[locale], "")
				_, rfc := readCSV(t, files[base(fc.report)+"_"+fc.csv+".csv"], "rfc")
				_, idc := readCSV(t, filepath.Join(idDir, base(fc.report)+"_"+fc.csv+".csv"), "id")
				for what, rows := range map[string]int{
					"sheet " + fc.tab[locale]: countWhere(body, fc.where, locale),
					fc.csv + ".csv (rfc)":     countWhere(rfc, fc.where, locale),
					fc.csv + ".csv (id)":      countWhere(idc, fc.where, locale),
				} {
					if float64(rows) != want {
						t.Errorf("%s: %d rows counted for %q, the warehouse says %v", what, rows, fc.label[locale], want)
					}
				}
			}
			checkSums(t, readings, locale)
			checkEveryFigure(t, readings, checked)
		})
	}
}

// checkSums: the figures of a summary that add up to another of its figures do.
func checkSums(t *testing.T, readings map[string][]*reading, locale string) {
	t.Helper()
	for _, sc := range readerSums {
		for _, rd := range readings[sc.report] {
			sum, tols := 0.0, 0.0
			ok := true
			for _, p := range append(slices.Clone(sc.parts), sc.total) {
				c, found := rd.figures[p[locale]]
				v, tol, err := number(c, locale)
				if !found || err != nil {
					t.Errorf("%s: no figure %q to add up", rd.where, p[locale])
					ok = false
					break
				}
				tols += tol
				if p[locale] != sc.total[locale] {
					sum += v
				} else if ok && math.Abs(sum-v) > tols {
					t.Errorf("%s: %s %s, its parts add up to %v", rd.where, sc.total[locale], c.text, sum)
				}
			}
		}
	}
}

// TestReaderCoversEveryReport: every report defined in reports/ (the embedded definitions) is in
// everyFigure, so the reader test delivers it and checks each figure people read on it, and has
// its title in reportTitles; neither names a report that is not defined.
func TestReaderCoversEveryReport(t *testing.T) {
	defs, err := report.Definitions()
	if err != nil {
		t.Fatal(err)
	}
	defined := map[string]bool{}
	for _, d := range defs {
		defined[d.Name] = true
		if !slices.Contains(everyFigure, d.Name) {
			t.Errorf("report %s: not in everyFigure (internal/delivery/reader_test.go): its headline figures and tables would be checked by nothing; add it, with a case for each", d.Name)
		}
		if _, ok := reportTitles[d.Name]; !ok {
			t.Errorf("report %s: no title in reportTitles (internal/delivery/reader_test.go): the reader test finds its part of the message by it", d.Name)
		}
	}
	for _, name := range everyFigure {
		if !defined[name] {
			t.Errorf("everyFigure names %s, which reports/ does not define", name)
		}
	}
	for name := range reportTitles {
		if !defined[name] {
			t.Errorf("reportTitles names %s, which reports/ does not define", name)
		}
	}
}

// checkEveryFigure: every figure and table found on the summary of a report everyFigure
// names, and in its part of the message, is one a case checks.
func checkEveryFigure(t *testing.T, readings map[string][]*reading, checked map[string]bool) {
	t.Helper()
	for _, rep := range everyFigure {
		for _, rd := range readings[rep] {
			for label := range rd.figures {
				if !checked[rep+"\x00"+label] && !slices.Contains(addedOnly[rep], label) {
					t.Errorf("%s: figure %q: no case here checks it against the warehouse", rd.where, label)
				}
			}
			for label := range rd.tables {
				if !checked[rep+"\x00"+label] {
					t.Errorf("%s: table %q: no case here checks it against the warehouse", rd.where, label)
				}
			}
		}
	}
}

// lookup is the table a reading has under the heading (the summary, the HTML) or under the
// sheet's name (the text part names the sheet over its table).
func lookup(rd *reading, heading, tab string) string {
	if _, ok := rd.tables[heading]; ok {
		return heading
	}
	return tab
}

// asTable is a data sheet's or a CSV's rows as a table of the case: the label made of its label
// columns as the summary joins them, the ID after the name where names repeat.
func asTable(head []string, body []map[string]cellText, total map[string]cellText, tc tableCase, locale string) *readTable {
	rt := &readTable{head: append([]string{tc.heading[locale]}, head...)}
	counts := map[string]int{}
	label := func(m map[string]cellText) string {
		var parts []string
		for _, c := range tc.labelCols {
			parts = append(parts, m[c[locale]].text)
		}
		return strings.Join(parts, " · ")
	}
	for _, m := range body {
		counts[label(m)]++
	}
	row := func(m map[string]cellText) []cellText {
		l := label(m)
		if id := m[tc.idCol[locale]].text; tc.idCol != nil && counts[l] > 1 {
			// the sheet names a repeated name's ID in its ID column: the label says its start
			parts := strings.SplitN(l, " · ", 2)
			parts[0] += " (" + id[:min(8, len(id))] + "…)"
			l = strings.Join(parts, " · ")
		}
		cells := []cellText{{text: l}}
		for _, h := range head {
			cells = append(cells, m[h])
		}
		return cells
	}
	for _, m := range body {
		rt.rows = append(rt.rows, row(m))
	}
	if total != nil {
		rt.total = []cellText{{text: tc.total[locale]}}
		for _, h := range head {
			rt.total = append(rt.total, total[h])
		}
	}
	return rt
}

func countWhere(rows []map[string]cellText, where *struct{ col, value loc }, locale string) int {
	if where == nil {
		return len(rows)
	}
	n := 0
	for _, r := range rows {
		if r[where.col[locale]].text == where.value[locale] {
			n++
		}
	}
	return n
}

func keys(m map[string]cellText) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func copyFile(from, to string) error {
	b, err := os.ReadFile(from)
	if err != nil {
		return err
	}
	return os.WriteFile(to, b, 0o644)
}
