package report

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/billsync/billsync/internal/config"
	"github.com/billsync/billsync/internal/entity"
	"github.com/billsync/billsync/internal/sheetfmt"
)

// lang is everything a workbook says that is not in reports/*.yaml: the
// summary's labels, number formats with the locale's separators, and friendly
// names for the service's codes.
type lang struct {
	code string
	// lcid tags every number format, so LibreOffice and Excel use the locale's
	// separators and month names whatever the reader's own settings are.
	lcid                 string
	words                map[string]string
	millions, millionsAx string
}

var langs = map[string]*lang{
	"id": {code: "id", lcid: sheetfmt.LCID("id"), millions: "juta", millionsAx: `#,##0,," jt"`, words: map[string]string{
		"as_of": "Per tanggal", "warning": "Peringatan", "tz": "Zona waktu", "currency": "Mata uang", "currency_note": "%s (jumlah dalam satuan utuh)",
		"account": "Akun sumber", "all_accounts": "%s (semua akun di basis data billsync)", "runs": "Berdasarkan sinkronisasi",
		"no_run": "belum ada sinkronisasi di basis data billsync", "warehouse": "Basis data billsync", "journal": "Log tugas",
		"generated": "Dibuat", "params": "Parameter", "reproduce": "Buat ulang", "queries": "Kueri",
		"sheets": "Lembar", "rows_from": "%s baris dari queries/%s", "checks": "Pemeriksaan", "notes": "Catatan",
		"headline": "Angka utama", "about": "Tentang laporan ini", "no_chart": "Tidak ada data untuk grafik.",
		"as_of_footer": "per", "exceptions": "%s: %s dari %s baris yang diperiksa (dari %s baris)",
		"exceptions_none": "Tidak diperiksa: %s (tidak ada baris yang dapat diperiksa dari %s baris)", "check_ok": "OK", "check_bad": "TIDAK COCOK",
		"difference": "selisih", "all": "(semua)", "query_default": "(bawaan kueri)", "rows": "baris",
		"run": "sinkronisasi %d (%s", "finished": ", selesai %s", "last_ok": "; terakhir berhasil: sinkronisasi %d pada %s",
		"unit": "unit", "none_rows": "(tidak ada baris)", "summary": "Ringkasan", "more_rows": "%s baris lagi di lembar %s",
		"adhoc": "Kueri ad-hoc", "adhoc_rows": "Baris",
		"jnl_not_configured": "tidak diatur: saldo dilaporkan kosong",
		"jnl_missing":        "%s belum ada (belum pernah ada tugas tambah kredit): saldo dilaporkan kosong",
		"jnl_no_tables":      "%s tidak berisi saldo dilaporkan (tidak ada tabel credit_balance_reports): saldo dilaporkan kosong",
		"jnl_unreadable":     "%s tidak dapat dibaca (%s): saldo dilaporkan kosong",
		"asof_after":         "tanggal laporan %s sesudah hari ini (%s, %s): angkanya adalah yang diketahui billsync pada sinkronisasi terakhirnya, bukan angka hari itu",
		"asof_before": "tanggal laporan %s berakhir sebelum sinkronisasi pertama billsync untuk akun %s (%s): riwayat perubahan baru dimulai saat itu, " +
			"jadi hari itu tidak dapat dijawab; data yang sudah hilang sebelumnya tidak ada dan sisanya ditampilkan seperti saat pertama terlihat",
	}},
	"en": {code: "en", lcid: sheetfmt.LCID("en"), millions: "million", millionsAx: `#,##0,," mn"`, words: map[string]string{
		"as_of": "As of", "warning": "Warning", "tz": "Time zone", "currency": "Currency", "currency_note": "%s (amounts in whole units)",
		"account": "Source account", "all_accounts": "%s (all accounts in the warehouse)", "runs": "Based on sync run",
		"no_run": "no sync run in the warehouse", "warehouse": "Warehouse", "journal": "Journal",
		"generated": "Generated", "params": "Parameters", "reproduce": "Reproduce", "queries": "Queries",
		"sheets": "Sheets", "rows_from": "%s rows from queries/%s", "checks": "Checks", "notes": "Notes",
		"headline": "Headline figures", "about": "About this report", "no_chart": "No data for the chart.",
		"as_of_footer": "as of", "exceptions": "%s: %s of %s rows checked (of %s rows)",
		"exceptions_none": "Not checked: %s (no row could be checked of %s rows)", "check_ok": "OK", "check_bad": "MISMATCH",
		"difference": "difference", "all": "(all)", "query_default": "(query default)", "rows": "rows",
		"run": "run %d (%s", "finished": ", finished %s", "last_ok": "; last succeeded run %d at %s",
		"unit": "units", "none_rows": "(no rows)", "summary": "Summary", "more_rows": "%s more rows on the %s sheet",
		"adhoc": "Ad-hoc query", "adhoc_rows": "Rows",
		"jnl_not_configured": "not configured: reported balances are empty",
		"jnl_missing":        "%s does not exist (no add-credit job has run): reported balances are empty",
		"jnl_no_tables":      "%s holds no reported balances (no credit_balance_reports table): reported balances are empty",
		"jnl_unreadable":     "%s could not be read (%s): reported balances are empty",
		"asof_after":         "as of %s is after today (%s in %s): the figures are what billsync knew at its last sync, not that day's",
		"asof_before": "as of %s ends before billsync's first sync of account %s (%s): the change history starts there, " +
			"so that day cannot be answered; records already gone by then are missing and the rest are shown as first seen",
	}},
}

func langOf(code string) (*lang, error) {
	if code == "" {
		code = config.DefaultLocale // the declared default, as withDefaults gives it
	}
	l, ok := langs[strings.ToLower(code)]
	if !ok {
		return nil, fmt.Errorf("locale %q: want one of %s", code, strings.Join(locales, ", "))
	}
	return l, nil
}

// CheckLocale says whether code names a locale the reports are written in.
func CheckLocale(code string) error {
	_, err := langOf(code)
	return err
}

// w is a summary word; a missing key shows itself so a gap is visible.
func (l *lang) w(key string) string {
	if s, ok := l.words[key]; ok {
		return s
	}
	return key
}

// journalNote is what the summary says about the write-job journal: its path,
// and why reported balances are empty when it cannot be read.
type journalNote struct {
	path   string
	state  string // "" = attached; else a word key (jnl_missing, ...)
	detail string // the error, for jnl_unreadable
}

func (j journalNote) text(l *lang) string {
	switch j.state {
	case "":
		return j.path
	case "jnl_not_configured":
		return l.w(j.state)
	case "jnl_unreadable":
		return fmt.Sprintf(l.w(j.state), j.path, j.detail)
	}
	return fmt.Sprintf(l.w(j.state), j.path)
}

// codeNames are friendly names for the codes the service and billsync's own
// queries put in text columns, per locale. A code not listed is shown as sent. The warehouse
// tables' names (and the detail reads') are their declarations' labels (tableNames).
var codeNames = withTableNames(map[string][2]string{ // code: {id, en}

	// payment link types

	"generic_link": {"Tautan umum", "Generic link"}, "physical_product": {"Produk fisik", "Physical product"},

	"event": {"Acara", "Event"}, "webinar": {"Webinar", "Webinar"}, "digital_product": {"Produk digital", "Digital product"},

	"coaching": {"Coaching", "Coaching"}, "course": {"Kursus", "Course"}, "cohort_based": {"Kelas kohort", "Cohort course"},

	"fundraising": {"Penggalangan dana", "Fundraising"}, "ebook": {"E-book", "E-book"}, "podcast": {"Podcast", "Podcast"},

	"audiobook": {"Buku audio", "Audiobook"}, "membership": {"Keanggotaan", "Membership"}, "zakat": {"Zakat", "Zakat"},

	"invoice": {"Invoice", "Invoice"}, "bundling": {"Paket", "Bundle"}, "saas": {"SaaS", "SaaS"},

	"payment_request": {"Permintaan pembayaran", "Payment request"}, "support": {"Dukungan", "Support"},

	"membership_payment": {"Pembayaran keanggotaan", "Membership payment"},

	// aging sources and collections kinds

	"unpaid transaction": {"Transaksi belum dibayar", "Unpaid transaction"},

	"payment request": {"Permintaan pembayaran", "Payment request"},

	// statuses

	"paid": {"Lunas", "Paid"}, "unpaid": {"Belum dibayar", "Unpaid"}, "active": {"Aktif", "Active"},

	"closed": {"Ditutup", "Closed"}, "expired": {"Kedaluwarsa", "Expired"}, "deleted": {"Dihapus", "Deleted"},

	"SUCCESS": {"Berhasil", "Succeeded"}, "FAILED": {"Gagal", "Failed"}, "PENDING": {"Tertunda", "Pending"},

	"succeeded": {"Berhasil", "Succeeded"}, "failed": {"Gagal", "Failed"}, "running": {"Berjalan", "Running"},

	"ACTIVE": {"Aktif", "Active"}, "INACTIVE": {"Tidak aktif", "Inactive"},

	"inactive": {"Tidak aktif", "Inactive"}, "created": {"Dibuat", "Created"},

	// credit

	"TOPUP": {"Isi ulang", "Top-up"}, "MERCHANT_TOPUP": {"Isi ulang oleh penjual", "Merchant top-up"},

	"TRIAL_TOPUP": {"Isi ulang uji coba", "Trial top-up"}, "CREDIT_USAGE": {"Pemakaian", "Usage"},

	"EXPIRE_VOID": {"Kedaluwarsa / batal", "Expired / void"}, "ADD_ON": {"Add-on", "Add-on"},

	"MEMBERSHIP": {"Keanggotaan", "Membership"},

	"OK": {"OK", "OK"}, "MISMATCH": {"TIDAK COCOK", "MISMATCH"},

	"LEDGER OLDER THAN REPORT": {"MUTASI DIAMBIL SEBELUM LAPORAN", "LEDGER OLDER THAN REPORT"},

	"OLDER THAN LAST REPORT": {"DIAMBIL SEBELUM LAPORAN TERAKHIR", "OLDER THAN LAST REPORT"},

	"NEVER FETCHED": {"BELUM PERNAH DIAMBIL", "NEVER FETCHED"},

	// data-quality e-mail problems (dq_email_fixes.sql)

	"empty": {"kosong", "empty"}, "malformed": {"format salah", "malformed"}, "shared": {"dipakai bersama", "shared"},

	"ambiguous": {"fromEmail tidak unik", "fromEmail not unique"},

	// sync run statuses not above

	"partial": {"Parsial", "Partial"},

	// collections against aging (collections_vs_aging.sql)

	"recon_open_here": {"Terbuka di sini", "Open here"},

	"recon_other_kinds": {"+ belum dibayar, jenis lain", "+ unpaid, other kinds"},

	"recon_before_window": {"+ terbit sebelum periode ini", "+ issued before these months"},

	"recon_rest": {"± selisih lain", "± other differences"},

	"recon_aging": {"= Total terutang, umur piutang", "= Outstanding in aging"},

	// choices of report variables, as notes say them ({aging_basis_name})

	"aging_basis=due": {"tanggal jatuh tempo", "due date"},

	"aging_basis=created": {"tanggal dibuat", "created date"},

	// aging buckets (see bucketName)

	"Current": {"Belum jatuh tempo", "Current"},
})

// withTableNames adds every declared table's label (internal/entity) to the code names: a new
// entity is named in both locales by its declaration, with no entry here. A code listed by hand
// too is a mistake the declarations would silently lose, so it panics at start.
func withTableNames(m map[string][2]string) map[string][2]string {
	for k, v := range entity.Labels(entity.All()) {
		if _, dup := m[k]; dup {
			panic("report: code " + k + " is both a declared table's label and a hand-written name")
		}
		m[k] = v
	}
	return m
}

var bucketRe = regexp.MustCompile(`^(?:(\d+)-(\d+)|Over (\d+))$`)

// codeName is the friendly name of a code in the locale; aging bucket labels
// ("31-60", "Over 90") read the same as the By customer sheet's headers.
func (l *lang) codeName(code string) string {
	i := 1
	if l.code == "id" {
		i = 0
	}
	if n, ok := codeNames[code]; ok {
		return n[i]
	}
	if parts := strings.Split(code, "; "); len(parts) > 1 { // a list of codes
		for k, p := range parts {
			parts[k] = l.codeName(p)
		}
		return strings.Join(parts, "; ")
	}
	if m := bucketRe.FindStringSubmatch(code); m != nil {
		if m[3] != "" {
			return fmt.Sprintf([]string{"Lebih dari %s hari", "Over %s days"}[i], m[3])
		}
		return fmt.Sprintf([]string{"%s-%s hari", "%s-%s days"}[i], m[1], m[2])
	}
	return code
}

var monthsID = []string{"Jan", "Feb", "Mar", "Apr", "Mei", "Jun", "Jul", "Agu", "Sep", "Okt", "Nov", "Des"}

// date is a calendar date as the locale writes it: 23 Nov 2026 (id: 23 Agu 2026).
func (l *lang) date(t time.Time) string {
	if l.code == "id" {
		return fmt.Sprintf("%d %s %d", t.Day(), monthsID[t.Month()-1], t.Year())
	}
	return t.Format("2 Jan 2006")
}

// dateTime is an instant in loc as the locale writes it.
func (l *lang) dateTime(t time.Time, loc *time.Location) string {
	t = t.In(loc)
	return l.date(t) + " " + t.Format("15:04 MST")
}

// number is an amount with the locale's thousands separator: 1.234.567 (id), 1,234,567 (en).
func (l *lang) number(n int64) string { return sheetfmt.Group(n, l.code) }

// count is a number of rows or records with the locale's thousands separator.
func (l *lang) count(n int) string { return l.number(int64(n)) }

// figure is f with the locale's separators and only the decimals it has (at
// most 4, as the credit ledger keeps): 1.234.567 or 1.234.567,5.
func (l *lang) figure(f float64) string {
	s := strings.TrimRight(strings.TrimRight(strconv.FormatFloat(f, 'f', 4, 64), "0"), ".")
	_, frac, _ := strings.Cut(s, ".")
	return l.decimal(f, len(frac))
}

// decimal is f with d decimals and the locale's separators.
func (l *lang) decimal(f float64, d int) string { return sheetfmt.Decimal(f, d, l.code) }

// moneyFormat is a whole-unit amount with the currency's symbol or code.
func moneyFormat(currency string) string { return sheetfmt.MoneyFormat(currency) }

// Locales the workbooks and CSVs are written in. Indonesian is the default:
// the merchant's finance team reads rupiah, WIB and Indonesian.
var locales = []string{"id", "en"}
