package sandbox

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"strings"
)

// The service's documented error answers ({"statusCode":N,"messages":"…"}); the English ones are its own words,
// the others its Indonesian texts.
const (
	msgValidation          = "Validation Error"
	msgExtraDataValidation = "extraData Validation Error"
	msgCustomerNotCreated  = "Pelanggan tidak ditemukan dan tidak dapat dibuat"
	msgAlreadyExist        = "already exist"
	msgDuplicateRequest    = "Duplicate request detected. Please wait 1 minute before trying again."
	msgPaymentNotFound     = "Payment not found"
	msgAlreadyPaid         = "Transaction already paid. Cannot edit payment request."

	msgCustomerEmailNotFound = "Pelanggan dengan email tersebut tidak ditemukan"
	msgEmailTaken            = "Email sudah digunakan oleh pelanggan lain"

	msgLinkNotFound       = "Tautan pembayaran tidak ditemukan"
	msgCouponCodeRequired = "Kode kupon wajib diisi"
	msgCouponNotFound     = "Kode kupon tidak ditemukan"
	msgCouponExpired      = "Kupon sudah kedaluwarsa"
	msgCouponInactive     = "Kupon tidak aktif"
	msgCouponNotYetActive = "Kupon belum berlaku"
	msgCouponOtherLink    = "Kupon tidak berlaku untuk tautan pembayaran ini"
	msgCouponTypeExcluded = "Kupon tidak berlaku untuk jenis produk ini"
	msgCouponMinimum      = "Minimal pembelian untuk kupon ini adalah %s"
	msgCouponUsedUp       = "Kuota penggunaan kupon sudah habis"
	msgCouponNeedsEmail   = "Kupon ini hanya untuk pelanggan tertentu: email pelanggan wajib diisi"
	msgCouponNewOnly      = "Kupon hanya berlaku untuk pelanggan baru"
	msgCouponExistingOnly = "Kupon hanya berlaku untuk pelanggan lama"
)

// duplicateWindow is how long the service refuses a repeat of the same invoice create (simulated ms).
const duplicateWindow = 60_000

// conflictErr is a 409; duplicateErr the 429 a repeated invoice create gets (an answer about the write,
// not a rate limit: it carries no Retry-After).
type conflictErr struct{ msg string }

func (e conflictErr) Error() string { return e.msg }

type duplicateErr struct{ msg string }

func (e duplicateErr) Error() string { return e.msg }

func conflict(msg string) error  { return conflictErr{msg} }
func duplicate(msg string) error { return duplicateErr{msg} }

// invoiceKey identifies "the same create" for the duplicate check.
func invoiceKey(email, name, description, expiredAt string, amount int64) string {
	h := sha256.Sum256([]byte(strings.ToLower(strings.TrimSpace(email)) + "\n" + name + "\n" + description + "\n" +
		expiredAt + "\n" + strconv.FormatInt(amount, 10)))
	return hex.EncodeToString(h[:8])
}

// recentCreate says whether the same invoice was created within the duplicate window.
func (w *world) recentCreate(k string) bool {
	at, ok := w.recentCreates[k]
	return ok && w.now-at < duplicateWindow
}

func (w *world) rememberCreate(k string) {
	for old, at := range w.recentCreates { // keep the map to the window
		if w.now-at >= duplicateWindow {
			delete(w.recentCreates, old)
		}
	}
	w.recentCreates[k] = w.now
}

// rupiah writes an amount the Indonesian way: Rp50.000.
func rupiah(n int64) string {
	s := strconv.FormatInt(n, 10)
	var b strings.Builder
	b.WriteString("Rp")
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte('.')
		}
		b.WriteRune(r)
	}
	return b.String()
}
