package jobs

import (
	"fmt"
	"regexp"
	"time"

	"github.com/billsync/billsync/internal/sheetfmt"
)

// What the plan and result files and the printed summaries call things, in Indonesian (the default) and
// English. A new state or column is one line in a table here; which fields of a kind hold numbers of which
// unit, the kind declares (traits.units).

// unit is what a number counts; it picks the number format of its cells.
type unit string

const (
	unitNone   unit = ""       // text
	unitRupiah unit = "money"  // whole rupiah (BILLSYNC_CURRENCY)
	unitCredit unit = "credit" // whole credit units, never a currency
	unitCount  unit = "int"    // items, rows, sends
)

// unitWords say what a whole number of the unit is, for the message refusing one that is not.
var unitWords = map[unit]string{
	unitRupiah: "amounts are whole rupiah, write e.g. 150000",
	unitCredit: "credit is counted in whole credit units (not rupiah), write e.g. 150000",
	unitCount:  "a count of items is a whole number, write e.g. 2",
}

// stateText is how a state reads, and whether a run still sends (or first checks) a row in it.
type stateText struct {
	id, en string
	toSend bool
}

// stateTexts: one line per state.
var stateTexts = map[State]stateText{
	Planned:    {"direncanakan", "planned", true},
	Sent:       {"terkirim, hasil belum dicatat", "sent, outcome not recorded", true},
	Succeeded:  {"berhasil", "succeeded", false},
	Failed:     {"gagal", "failed", false},
	Unknown:    {"hasil belum diketahui", "outcome unknown", true},
	NotApplied: {"belum diterapkan", "not applied", true},
	Unresolved: {"belum terselesaikan", "unresolved", false},
	Held:       {"ditahan: sudah dikirim sebelumnya", "held: sent before", false},
}

// stateOrder is the order states are counted in.
var stateOrder = []State{Planned, Sent, Succeeded, Failed, Unknown, NotApplied, Unresolved, Held}

// noteKeys are the detail fields that explain a row in its state, shown in the note column.
var noteKeys = map[State][]string{
	Failed:     {"reason"},
	Unknown:    {"note"},
	Unresolved: {"reconciled"},
	NotApplied: {"reconciled"},
	Succeeded:  {"resolvedBy"},
	Held:       {"repeatOf"},
}

// words are the files' and summaries' own words: {id, en}.
var words = map[string][2]string{
	// columns
	"repeat_of": {"Mengulang kiriman", "Repeats"},
	"seq":       {"Baris", "Row"}, "line": {"Baris berkas", "File line"}, "state": {"Status", "State"},
	"target": {"Sasaran", "Target"}, "change": {"Perubahan", "Change"}, "note": {"Keterangan", "Note"},
	"action_id": {"ID aksi (kunci idempotensi)", "Action ID (idempotency key)"}, "sends": {"Kali dikirim", "Times sent"},
	"error": {"Galat", "Error"}, "reconciled": {"Hasil pemeriksaan", "Reconciled"}, "read": {"Yang dibaca", "Read"},
	"missing": {"Yang kurang", "Missing"}, "settle": {"Cara menyelesaikan", "To settle"},
	"current":         {"%s (saat rencana)", "%s (at planning)"},
	"current.balance": {"Saldo per sinkronisasi", "Balance at last sync"}, "current.customerName": {"Nama pelanggan", "Customer name"},
	"current.customerEmail": {"E-mail pelanggan", "Customer e-mail"}, "current.productName": {"Nama produk", "Product name"},
	// what the service answered (the kinds' results); links and IDs keep their field names
	"result.balance": {"Saldo dilaporkan", "Reported balance"}, "result.message": {"Pesan layanan", "Service message"},
	"result.valid": {"Berlaku", "Valid"}, "result.discountType": {"Jenis diskon", "Discount type"},
	"result.discountValue": {"Nilai diskon", "Discount value"}, "result.minimumPurchase": {"Pembelian minimum", "Minimum purchase"},
	"result.eligibleCustomerType": {"Pelanggan yang berhak", "Eligible customers"},
	// sheets
	"sheet.plan": {"Rencana", "Plan"}, "sheet.result": {"Hasil", "Result"}, "sheet.summary": {"Ringkasan", "Summary"},
	// summary
	"title.plan": {"Rencana tugas %s", "Job plan %s"}, "title.result": {"Hasil tugas %s, jalan ke-%d", "Job result %s, run %d"},
	"plan": {"Rencana", "Plan"}, "kind": {"Jenis", "Kind"}, "account": {"Akun", "Account"}, "input": {"Berkas masukan", "Input file"},
	"planned": {"Direncanakan", "Planned"}, "by_on": {"%s oleh %s di %s", "%s by %s on %s"},
	"synced": {"Basis data billsync disinkronkan", "Warehouse synced"}, "never": {"belum pernah", "never"},
	"approved": {"Disetujui", "Approved"}, "not_approved": {"belum", "not yet"},
	"approved_by": {"%s oleh %s untuk %s", "%s by %s for %s"}, "self": {" (oleh perencananya sendiri)", " (by its planner)"},
	"old_approval": {"%s oleh %s, tanpa layanan tujuan (setujui lagi)", "%s by %s, without a target service (approve again)"},
	"production":   {"%s (PRODUKSI)", "%s (PRODUCTION)"}, "not_production": {"%s (bukan produksi)", "%s (not production)"},
	"tz": {"Zona waktu", "Time zone"}, "rows": {"Baris", "Rows"}, "states": {"Status baris", "Row states"},
	"run": {"Jalan", "Run"}, "run_of": {"ke-%d dari rencana ini (jalan %d di log tugas), %s oleh %s", "%d of this plan (run %d in the journal), %s by %s"},
	"service": {"Layanan", "Service"}, "run_status": {"Status jalan", "Run status"}, "sent_n": {"Dikirim", "Sent"},
	"group": {"Kelompok", "Group"}, "group.productName": {"Produk", "Product"}, "group.linkName": {"Tautan", "Link"},
	"all": {"(semua)", "(all)"}, "total": {"Total", "Total"}, "to_send": {"Baris yang masih dikirim", "Rows still to send"},
	"sum.money": {"Jumlah (Rp)", "Amount (Rp)"}, "sum.credit": {"Jumlah kredit (unit)", "Credit (units)"},
	"sum_to_send.money":  {"Jumlah yang masih dikirim (Rp)", "Amount still to send (Rp)"},
	"sum_to_send.credit": {"Kredit yang masih dikirim (unit)", "Credit still to send (units)"},
	"page_footer":        {"dibuat", "made"},
}

// phrases are the sentences of the plan's texts (target, change) and of the files' cells, as format
// strings: {id, en}. A plan's target and change are written in its locale, as its digits are.
var phrases = map[string][2]string{
	// targets and changes (the kinds' check)
	"target.customer":        {"pelanggan %s (%s)", "customer %s (%s)"},
	"target.customer_of":     {"pelanggan %s (%s) · %s", "customer %s (%s) · %s"},
	"target.shared_email":    {"salah satu dari %d pelanggan dengan e-mail yang sama: %s", "one of %d customers sharing the e-mail: %s"},
	"target.license":         {"lisensi %s untuk %s", "license %s of %s"},
	"target.payment_request": {"permintaan pembayaran %s (%s, %s)", "payment request %s (%s, %s)"},
	"what.product":           {"produk", "product"}, "what.payment request": {"permintaan pembayaran", "payment request"},
	"what.invoice":        {"invoice", "invoice"},
	"change.balance":      {"saldo %s → %s (+%s)", "balance %s → %s (+%s)"},
	"change.email":        {"e-mail %s → %s", "e-mail %s → %s"},
	"change.invoice":      {"invoice baru %s × %s = %s, kedaluwarsa %s", "new invoice %s × %s = %s, expires %s"},
	"change.status":       {"status → %s", "status → %s"},
	"change.coupon":       {"periksa kupon %s pada %s", "check coupon %s at %s"},
	"change.checkout":     {"tautan checkout baru", "new checkout link"},
	"change.checkout_for": {"tautan checkout baru untuk %s kredit", "new checkout link for %s credit"},
	"change.field":        {"%s %q → %q", "%s %q → %q"},
	"change.expires":      {"kedaluwarsa %s", "expires %s"},
	// held rows (PlanTable)
	"held.note": {"tidak dikirim; untuk tetap mengirimnya tulis yes di kolom repeat lalu rencanakan lagi (atau seluruh berkas dengan -again)",
		"not sent; to send it anyway write yes in its repeat column and plan again (or the whole file with -again)"},
	"held.balance": {"saldo %s menurut jawaban layanan atas kiriman itu (%s); tidak dikirim lagi",
		"balance %s as the service answered that send (%s); not sent again"},
	"held.balance_sync": {"saldo %s per sinkronisasi %s (kiriman itu tidak mencatat saldo); tidak dikirim lagi",
		"balance %s as of the sync of %s (that send recorded no balance); not sent again"},
	"held.balance_service": {"saldo %s per sinkronisasi %s, yang sudah memuat catatan layanan itu; tidak dikirim lagi",
		"balance %s as of the sync of %s, which holds that record of the service; not sent again"},
	"on_service": {"catatan layanan sendiri menunjukkan perubahan yang sama: %s", "the service's own records show the same change: %s"},
	"repeat_of":  {"rencana %s baris %s (baris berkas %s%s), %s: %s", "plan %s row %s (line %s%s), %s: %s"},
	"of_file":    {" dari %s", " of %s"},
	"and_more":   {" (dan %s kiriman lain yang sama sebelumnya)", " (and %s earlier send(s) of the same)"},
	// a send's moment, from the journal: before the request and after its answer
	"sent_between": {"dikirim antara %s dan %s", "sent between %s and %s"},
	"sent_after":   {"dikirim setelah %s (jawabannya tidak tercatat)", "sent after %s (no answer journaled)"},
}

// f is a phrase in the locale with its arguments.
func (l lang) f(key string, args ...any) string {
	p, ok := phrases[key]
	if !ok {
		return key
	}
	if l == "en" {
		return fmt.Sprintf(p[1], args...)
	}
	return fmt.Sprintf(p[0], args...)
}

// runStatuses are a run's statuses as the files say them.
var runStatuses = map[string][2]string{
	"running": {"berjalan", "running"}, "completed": {"selesai", "completed"},
	"completed_with_failures": {"selesai dengan kegagalan", "completed with failures"},
	"incomplete":              {"belum selesai", "incomplete"}, "aborted": {"dihentikan", "aborted"},
}

func (l lang) runStatus(s string) string {
	t, ok := runStatuses[s]
	if !ok {
		return s
	}
	if l == "en" {
		return t[1]
	}
	return t[0]
}

// sentWhen says when a send happened as the journal knows it: between the transition written before the
// request and the one written after its answer, in loc; after the first when no answer was journaled.
func (l lang) sentWhen(before, after time.Time, loc *time.Location) string {
	if loc == nil {
		loc = time.UTC
	}
	if after.IsZero() {
		return l.f("sent_after", before.In(loc).Format("2006-01-02 15:04:05 MST"))
	}
	end := after.In(loc).Format("15:04:05 MST")
	if a, b := before.In(loc), after.In(loc); a.YearDay() != b.YearDay() || a.Year() != b.Year() {
		end = after.In(loc).Format("2006-01-02 15:04:05 MST")
	}
	return l.f("sent_between", before.In(loc).Format("2006-01-02 15:04:05"), end)
}

// lang is the locale of a file or a printed summary.
type lang string

func langOf(locale string) lang {
	if locale == "en" {
		return "en"
	}
	return "id"
}

func (l lang) w(key string) string {
	ws, ok := words[key]
	if !ok {
		return key
	}
	if l == "en" {
		return ws[1]
	}
	return ws[0]
}

func (l lang) state(s State) string {
	t, ok := stateTexts[s]
	if !ok {
		return string(s)
	}
	if l == "en" {
		return t.en
	}
	return t.id
}

// group is n with the locale's thousands separator.
func (l lang) group(n int64) string { return sheetfmt.Group(n, string(l)) }

// number is a number's text (digits, maybe a decimal point) as the locale writes it; other text as it is.
func (l lang) number(s string) string { return sheetfmt.Number(s, string(l)) }

// zone is loc's abbreviation at t, with its IANA name when that differs: WIB (Asia/Jakarta).
func zone(t time.Time, loc *time.Location) string {
	abbr, _ := t.In(loc).Zone()
	if loc.String() == abbr || loc.String() == "" {
		return abbr
	}
	return abbr + " (" + loc.String() + ")"
}

// clock is an instant in loc with its zone's abbreviation: 2026-11-27 07:05 WIB.
func clock(t time.Time, loc *time.Location) string {
	if t.IsZero() {
		return "never"
	}
	if loc == nil {
		loc = time.UTC
	}
	return t.In(loc).Format("2006-01-02 15:04 MST")
}

// utcStampRe is an RFC 3339 UTC time as the journal's evidence writes it.
var utcStampRe = regexp.MustCompile(`\b\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z\b`)

// localTimes shows the UTC times in a text (evidence, messages) in loc, its zone named, so one zone is
// printed everywhere. Times without a zone (as a service sent them) are left as they are.
func localTimes(s string, loc *time.Location) string {
	if loc == nil || loc == time.UTC {
		return s
	}
	return utcStampRe.ReplaceAllStringFunc(s, func(m string) string {
		t, err := time.Parse(time.RFC3339Nano, m)
		if err != nil {
			return m
		}
		return t.In(loc).Format("2006-01-02 15:04:05 MST")
	})
}

func stamp(t time.Time) string {
	if t.IsZero() {
		return "never"
	}
	return t.Format("2006-01-02 15:04 MST") // in the zone it carries: the configured one (buildPlan)
}
