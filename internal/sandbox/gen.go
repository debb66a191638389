package sandbox

import (
	"fmt"
	"math"
	"strings"
)

// Generators of single records. Each draws only from w.rng, so a world built
// by the same calls in the same order is the same world.

const (
	day  = int64(24 * 3600 * 1000)
	hour = int64(3600 * 1000)

	eventReceived      = "payment.received"
	eventReminder      = "payment.reminder"
	eventMemberExpired = "membership.memberExpired"
)

var productTypes = []string{
	"generic_link", "physical_product", "event", "webinar", "digital_product", "coaching", "course",
	"cohort_based", "fundraising", "ebook", "podcast", "audiobook", "membership", "zakat", "invoice",
	"bundling", "saas", "payment_request", "support",
}

var firstNames = []string{
	"Siti", "Dewi", "Budi", "Agus", "Rina", "Putri", "Andi", "Wahyu", "Ayu", "Rizky", "Fajar", "Indah",
	"Yusuf", "Nur", "Bayu", "Kirana", "Larasati", "Eko", "Sri", "Hendra", "Made", "Ketut", "Wayan",
	"Intan", "Reza", "Dian", "Galih", "Citra", "Ñoño", "Gök", "Zoë", "José", "Ahmad", "Fitri", "Teguh",
}

var lastNames = []string{
	"Nurhaliza", "Lestari", "Santoso", "Wijaya", "Saputra", "Hidayat", "Pratama", "Kusuma", "Siregar",
	"Nasution", "Simanjuntak", "Halim", "Gunawan", "Setiawan", "Rahmawati", "Permata", "Sembiring",
	"Pérez", "Yılmaz", "Müller", "Harahap", "Tanjung", "Utami", "Wibowo", "Purnomo",
}

var mailDomains = []string{"gmail.com", "gmail.com", "gmail.com", "yahoo.co.id", "outlook.com", "ymail.com", "mail.co.id"}

var productWords = map[string][]string{
	"generic_link":     {"Jasa Desain Logo", "Pembuatan Jasa Web", "Konsultasi Pajak", "Sewa Alat"},
	"physical_product": {"Kopi Gayo 250g", "Batik Tulis Solo", "Sambal Roa", "Kaos Komunitas"},
	"event":            {"Workshop UMKM", "Festival Kuliner", "Seminar Ekspor", "Konser Amal"},
	"webinar":          {"Webinar Digital Marketing", "Webinar Keuangan Keluarga", "Webinar Ekspor"},
	"digital_product":  {"Template Laporan Keuangan", "Preset Lightroom", "Font Nusantara"},
	"coaching":         {"Coaching Bisnis 1:1", "Mentoring Karier", "Coaching Public Speaking"},
	"course":           {"Kelas Pemrograman Web Dasar", "Kursus Akuntansi", "Kelas Fotografi"},
	"cohort_based":     {"Bootcamp Data Analyst", "Cohort Product Manager", "Akselerator UMKM"},
	"fundraising":      {"Donasi Banjir", "Wakaf Sumur", "Beasiswa Anak Negeri"},
	"ebook":            {"Ebook Resep Nusantara", "Ebook Investasi Pemula", "Panduan Ekspor"},
	"podcast":          {"Podcast Cerita Bisnis", "Podcast Ngobrol Pajak"},
	"audiobook":        {"Invisible Man", "Laskar Pelangi Audio", "Bumi Manusia Audio"},
	"membership":       {"Membership Komunitas Kreator", "Klub Investor", "Member Premium"},
	"zakat":            {"Zakat Mal", "Zakat Fitrah", "Fidyah"},
	"invoice":          {"Invoice Jasa", "Tagihan Proyek"},
	"bundling":         {"Paket Hemat Kelas", "Bundling Ebook"},
	"saas":             {"Aplikasi Kasir Pro", "API Kredit AI", "Software Akuntansi", "Sistem Antrian"},
	"payment_request":  {"Penagihan", "Permintaan Pembayaran"},
	"support":          {"Dukung Kreator", "Traktir Kopi"},
}

var reviewTexts = [6][]string{
	1: {"Kecewa, tidak sesuai deskripsi", "Pengiriman lama sekali"},
	2: {"Kurang memuaskan", "Materi terlalu dasar"},
	3: {"Lumayan", "Cukup, bisa ditingkatkan"},
	4: {"Bagus, terima kasih", "Materi jelas dan rapi"},
	5: {"Bagus sekali, takde minusnyo", "Mantap, sangat membantu!", "Luar biasa 👍", "Recommended banget"},
}

func (w *world) pick(list []string) string { return list[w.rng.IntN(len(list))] }

// between returns a uniform time in [a, b].
func (w *world) between(a, b int64) int64 {
	if b <= a {
		return a
	}
	return a + w.rng.Int64N(b-a+1)
}

// amountIDR draws a whole-rupiah price: mostly thousands to millions, rarely billions.
func (w *world) amountIDR() int64 {
	var lo, hi float64
	switch r := w.rng.Float64(); {
	case r < 0.70:
		lo, hi = 1e4, 2e6
	case r < 0.95:
		lo, hi = 2e6, 5e8
	default:
		lo, hi = 5e8, 5e10
	}
	v := math.Exp(math.Log(lo) + w.rng.Float64()*(math.Log(hi)-math.Log(lo)))
	return int64(v/1000) * 1000
}

func (w *world) slug(n int) string {
	const chars = "abcdefghijklmnopqrstuvwxyz0123456789"
	b := make([]byte, n)
	for i := range b {
		b[i] = chars[w.rng.IntN(len(chars))]
	}
	return string(b)
}

func (w *world) mobile() string {
	n := fmt.Sprintf("8%d%09d", 11+w.rng.IntN(89), w.rng.IntN(1e9))
	switch r := w.rng.IntN(10); {
	case r < 6:
		return "62" + n
	case r < 8:
		return "+62" + n
	default:
		return "0" + n
	}
}

func asciiFold(s string) string {
	r := strings.NewReplacer("Ñ", "N", "ñ", "n", "ö", "o", "Ö", "O", "ı", "i", "é", "e", "ë", "e", "ü", "u", " ", ".")
	return strings.ToLower(r.Replace(s))
}

func (w *world) genCustomer(at int64) *customer {
	name := w.pick(firstNames)
	if w.rng.IntN(5) > 0 {
		name += " " + w.pick(lastNames)
	}
	email := fmt.Sprintf("%s%d@%s", asciiFold(name), w.rng.IntN(1000), w.pick(mailDomains))
	switch r := w.rng.IntN(400); {
	case r == 0:
		email = strings.Replace(email, "@", "", 1) // no @ at all
	case r == 1:
		email = strings.Replace(email, "@", " @", 1)
	case r == 2:
		email = strings.TrimSuffix(email, ".com") // no top-level domain left on some
	case r < 6 && w.customers.len() > 0:
		email = strings.ToUpper(w.customers.items[w.rng.IntN(w.customers.len())].email) // duplicate
	}
	status := "active"
	if w.rng.IntN(20) == 0 {
		status = "inactive"
	}
	updated := at + w.rng.Int64N(2000)
	if w.rng.IntN(10) == 0 {
		updated = w.between(at, w.now)
	}
	return &customer{id: w.newID(), createdAt: at, updatedAt: updated, email: email, mobile: w.mobile(), name: name, status: status}
}

func (w *world) genProduct(at int64, typ string) *product {
	name := w.pick(productWords[typ])
	if w.rng.IntN(3) > 0 {
		name += fmt.Sprintf(" %s", w.pick([]string{"Batch 2", "2025", "Premium", "Lite", "Vol. 3", "Edisi Khusus"}))
	}
	p := &product{
		id: w.newID(), amount: w.amountIDR(), createdAt: at, typ: typ, status: "active", name: name,
		description: "<p>" + name + " dari Toko Nusantara.</p>\n",
		link:        strings.ToLower(strings.ReplaceAll(asciiFold(name), ".", "-")) + "-" + w.slug(4),
	}
	if w.rng.IntN(4) == 0 {
		p.category = w.pick([]string{"Pendidikan", "Kuliner", "Teknologi", "Sosial"})
	}
	if typ == "saas" || typ == "membership" {
		if w.rng.IntN(2) == 0 {
			p.subType = "credit_usage"
		}
	}
	if typ == "membership" {
		for _, n := range []string{"Silver", "Gold"} {
			p.tiers = append(p.tiers, tier{id: w.newID(), name: n})
		}
	}
	if w.rng.IntN(5) == 0 {
		p.limit = int64(10 * (1 + w.rng.IntN(50)))
	}
	switch r := w.rng.IntN(20); {
	case r < 2:
		p.status = "inactive"
	case r == 2:
		p.status = "deleted"
	}
	if w.rng.IntN(3) == 0 {
		for i, n := 0, 1+w.rng.IntN(3); i < n; i++ {
			p.variants = append(p.variants, variant{
				id: w.newID(), name: w.pick([]string{"Basic", "Pro", "Landing Page ", "Sistem Crud", "Keluarga"}),
				description: "<p></p>\n", amount: w.amountIDR(), createdAt: at + int64(i)*1000,
			})
		}
	}
	if w.rng.IntN(2) == 0 {
		p.cover = &image{id: w.newID(), fileType: "jpeg", createdAt: at}
	}
	if w.rng.IntN(4) == 0 {
		p.multiID = w.newID()
		for i, n := 0, 1+w.rng.IntN(3); i < n; i++ {
			p.images = append(p.images, image{id: w.newID(), fileType: w.pick([]string{"jpeg", "png"}), createdAt: at})
		}
	}
	return p
}

func (w *world) randomCustomer() *customer {
	return w.customers.items[w.rng.IntN(w.customers.len())]
}

// randomProduct picks any product, or one of the given types (nil if none exists).
func (w *world) randomProduct(types ...string) *product {
	if len(types) == 0 {
		return w.products.items[w.rng.IntN(w.products.len())]
	}
	n := 0
	for _, t := range types {
		n += len(w.byType[t])
	}
	if n == 0 {
		return nil
	}
	i := w.rng.IntN(n)
	for _, t := range types {
		if i < len(w.byType[t]) {
			return w.byType[t][i]
		}
		i -= len(w.byType[t])
	}
	return nil
}

// payOutcome decides when an open link created at `at` and closing at `exp`
// will be paid (0 = never): about 60% are paid, mostly early.
func (w *world) payOutcome(at, exp int64) int64 {
	if w.rng.Float64() >= 0.6 {
		return 0
	}
	span := float64(exp - at)
	return at + int64(span*w.rng.Float64()*w.rng.Float64()) + 1
}

// genInvoice creates an invoice in its initial state (active, transaction created).
func (w *world) genInvoice(at int64, c *customer) *invoice {
	return &invoice{
		id: w.newID(), txID: w.newID(), amount: w.amountIDR(), createdAt: at,
		description: w.pick([]string{"", "Tagihan jasa bulan ini", "Pelunasan proyek", "DP 50%"}),
		link:        w.slug(11), status: "active", txStatus: "created",
		name: w.pick([]string{"INVOICE", "Invoice Jasa", "Tagihan"}), cust: c,
		expiredAt: at + day*int64(7+w.rng.IntN(114)),
	}
}

func (w *world) genPayReq(at int64, c *customer) *payReq {
	p := &payReq{
		id: w.newID(), amount: w.amountIDR(), createdAt: at, link: w.slug(10), status: "unpaid",
		description: w.pick([]string{"<p>Test payment request</p>\n", "Ubah ReqPayment", "<p>Pembayaran <b>kelas</b> privat</p>\n", ""}),
		name:        c.name, cust: c, expiredAt: at + day*int64(3+w.rng.IntN(88)),
	}
	if w.rng.IntN(3) == 0 {
		p.redirectURL = "https://toko-nusantara.example/terima-kasih"
	}
	return p
}

func (w *world) genReview(at int64, c *customer, p *product) *review {
	var rating int64
	switch r := w.rng.IntN(100); {
	case r < 55:
		rating = 5
	case r < 80:
		rating = 4
	case r < 90:
		rating = 3
	case r < 94:
		rating = 2
	default:
		rating = 1
	}
	return &review{id: w.newID(), createdAt: at, updatedAt: at + w.rng.Int64N(hour), cust: c, prod: p, rating: rating, message: w.pick(reviewTexts[rating])}
}

func (w *world) newLedger(at int64, c *customer, p *product, typ string, credit, debit int64) *ledgerEntry {
	l := &ledgerEntry{id: w.newID(), createdAt: at, credit: credit, debit: debit, prod: p, cust: c, typ: typ, walletType: "ADD_ON"}
	if p.typ == "membership" {
		l.walletType = "MEMBERSHIP"
		if len(p.tiers) > 0 {
			l.tierID = p.tiers[w.rng.IntN(len(p.tiers))].id
		}
	}
	if credit > 0 && typ != "MERCHANT_TOPUP" {
		l.expiredAt = at + 365*day
	}
	return l
}

// ledgerMove adds one realistic movement on (c, p) at `at`, never overdrawing.
func (w *world) ledgerMove(at int64, c *customer, p *product) {
	bal := w.balance[balanceKey{c.id, p.id}]
	var l *ledgerEntry
	switch r := w.rng.IntN(100); {
	case bal == 0 && len(w.ledgerBy[c.id]) == 0:
		l = w.newLedger(at, c, p, "TRIAL_TOPUP", int64(1000*(1+w.rng.IntN(10))), 0)
	case bal == 0 || r < 25:
		l = w.newLedger(at, c, p, w.pick([]string{"TOPUP", "TOPUP", "MERCHANT_TOPUP"}), int64(10000*(1+w.rng.IntN(100))), 0)
	case r < 30:
		l = w.newLedger(at, c, p, "EXPIRE_VOID", 0, bal/(1+int64(w.rng.IntN(4))))
	default:
		l = w.newLedger(at, c, p, "CREDIT_USAGE", 0, 1+w.rng.Int64N(max(bal/3, 1)))
	}
	if l.debit > bal {
		l.debit = bal
	}
	if l.credit == 0 && l.debit == 0 {
		return
	}
	w.addLedger(l)
}

func (w *world) paymentEvent(event string, at int64, txID, linkID ID, c *customer, amount int64, name, typ, txStatus string) *webhook {
	h := &webhook{
		id: w.newID(), createdAt: at, event: event, status: "PENDING", linkID: linkID, txID: txID,
		data: eventData{txID: txID, linkID: linkID, custID: c.id, custName: c.name, custEmail: c.email, mob: c.mobile,
			amount: amount, prodName: name, prodType: typ, status: "SUCCESS", txStatus: txStatus, at: at},
	}
	if txStatus == "paid" {
		h.data.method = w.pick([]string{"QRIS", "VA_BCA", "VA_MANDIRI", "OVO", "GOPAY", "CREDIT_CARD"})
	} else {
		h.data.status = "PENDING"
	}
	h.nextDelivery = at + 5000
	return h
}

func (w *world) memberEvent(event string, at int64, c *customer) *webhook {
	return &webhook{
		id: w.newID(), createdAt: at, event: event, status: "PENDING", nextDelivery: at + 5000,
		data: eventData{txID: w.newID(), custID: c.id, custName: c.name, custEmail: c.email, mob: c.mobile, status: "INACTIVE"},
	}
}

// deliver settles one delivery attempt of h at time at.
func (w *world) deliver(h *webhook, at int64) {
	h.attempts++
	h.updatedAt = at
	if w.rng.IntN(10) < 8 {
		h.status, h.nextDelivery, h.response = "SUCCESS", 0, `{"ok":true}`
		return
	}
	h.status, h.response = "FAILED", "502 Bad Gateway"
	h.nextDelivery = 0
	if h.attempts < 3 {
		h.nextDelivery = at + hour*int64(h.attempts)
	}
}
