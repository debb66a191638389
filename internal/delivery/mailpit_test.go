package delivery

import (
	"bytes"
	"context"
	"encoding/csv"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

const pack = `deliveries:
  - name: close
    reports: [aging, collections]
    schedule: "0 7 1 * *"
    as_of: end of last month
    format: both
    to: [finance@toko.example, "Ibu CFO <cfo@toko.example>"]
    cc: [controller@toko.example]
`

// TestMailpitSTARTTLS sends an occurrence through a real SMTP server (mailpit, STARTTLS
// required, AUTH) and reads what arrived: the recipients, the subject, every attachment
// byte-equal to the file written, the body's figures equal to the report's totals, in
// Indonesian. A wrong password fails, is journaled, and delivers nothing; the occurrence sent
// is not sent twice.
func TestMailpitSTARTTLS(t *testing.T) {
	mp := startMailpit(t, "finance-bot", "s3cret-pass", false)
	db := testWarehouse(t)
	o := testOptions(t, db)
	o.Retries = 2
	d := testDelivery(t, pack)
	asOf := time.Date(2026, 5, 31, 0, 0, 0, 0, time.UTC)
	ctx := context.Background()

	o.SMTP = mp.smtp("finance-bot", "wrong-pass", false)
	res, err := Deliver(ctx, o, Occurrence{Delivery: d, AsOf: asOf})
	if err == nil || res.State != "refused" || res.Attempts != 1 {
		t.Fatalf("wrong password: %v, %+v (a refused password is not retried)", err, res)
	}
	if strings.Contains(err.Error(), "wrong-pass") {
		t.Errorf("the error shows the password: %v", err)
	}
	if n := len(mp.messages(t)); n != 0 {
		t.Fatalf("wrong password: %d messages arrived", n)
	}

	o.SMTP = mp.smtp("finance-bot", "s3cret-pass", false)
	res, err = Deliver(ctx, o, Occurrence{Delivery: d, AsOf: asOf})
	if err != nil || res.State != "sent" {
		t.Fatalf("send: %v, %+v", err, res)
	}
	list := mp.messages(t)
	if len(list) != 1 {
		t.Fatalf("%d messages arrived, want 1", len(list))
	}
	msg := mp.message(t, list[0].ID)
	if msg.MessageID != res.MessageID || msg.Subject != res.Subject {
		t.Errorf("arrived %q %q, sent %q %q", msg.MessageID, msg.Subject, res.MessageID, res.Subject)
	}
	if want := "Laporan close per 31 Mei 2026"; !strings.Contains(msg.Subject, want) {
		t.Errorf("subject %q, want it to contain %q", msg.Subject, want)
	}
	var to, cc []string
	for _, a := range msg.To {
		to = append(to, a.Address)
	}
	for _, a := range msg.Cc {
		cc = append(cc, a.Address)
	}
	slices.Sort(to)
	if strings.Join(to, ",") != "cfo@toko.example,finance@toko.example" || strings.Join(cc, ",") != "controller@toko.example" {
		t.Errorf("to %v cc %v", to, cc)
	}
	if msg.From.Address != "billsync@toko.example" {
		t.Errorf("from %v", msg.From)
	}

	// Every file written arrived, byte for byte.
	if len(msg.Attachments) != len(res.Files) || len(res.Files) < 6 {
		t.Fatalf("%d attachments, %d files", len(msg.Attachments), len(res.Files))
	}
	byName := map[string]string{}
	for _, a := range msg.Attachments {
		byName[a.FileName] = a.PartID
	}
	for _, f := range res.Files {
		part, ok := byName[filepath.Base(f.Path)]
		if !ok {
			t.Errorf("%s not attached", filepath.Base(f.Path))
			continue
		}
		got := mp.get(t, "/api/v1/message/"+msg.ID+"/part/"+part, nil)
		want, err := os.ReadFile(f.Path)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s: %d bytes arrived, %d written", filepath.Base(f.Path), len(got), len(want))
		}
	}

	// The headline figure is the total of the report's own rows.
	outstanding := csvTotal(t, filepath.Join(o.Report.ReportsOut, "deliveries", "close", "2026-05-31",
		"aging_2026-05-31_basis-due_by-customer.csv"), "Total terutang")
	line := "Total terutang: Rp " + idThousands(outstanding)
	if !strings.Contains(msg.Text, line) {
		t.Errorf("the text part lacks %q:\n%s", line, msg.Text)
	}
	if !strings.Contains(msg.HTML, "Rp "+idThousands(outstanding)) {
		t.Errorf("the HTML part lacks the total outstanding Rp %s", idThousands(outstanding))
	}
	for _, want := range []string{"Angka utama", "Pemeriksaan", "Data dari sinkronisasi", "Terlampir (", "Umur piutang", "Penagihan"} {
		if !strings.Contains(msg.Text, want) || !strings.Contains(msg.HTML, want) {
			t.Errorf("the message lacks %q", want)
		}
	}

	// The occurrence is sent: once more sends nothing.
	res, err = Deliver(ctx, o, Occurrence{Delivery: d, AsOf: asOf})
	if err != nil || res.State != "already" {
		t.Fatalf("second deliver: %v, %+v", err, res)
	}
	if n := len(mp.messages(t)); n != 1 {
		t.Errorf("%d messages after the second deliver, want 1", n)
	}
	es, err := List(ctx, JournalPath(db), "close", 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(es) != 2 || es[0].State != "sent" || es[1].State != "refused" || !strings.Contains(es[1].Error, "smtp") ||
		es[0].Files != len(res.Files) && es[0].Files != len(byName) {
		t.Errorf("journal: %+v", es)
	}
	for _, f := range es[0].FileList {
		fi, err := hashFile(f.Path)
		if err != nil || fi.SHA256 != f.SHA256 {
			t.Errorf("journal sha256 of %s: %s, file %s", f.Path, f.SHA256, fi.SHA256)
		}
	}
}

// TestMailpitImplicitTLS: smtps:// speaks TLS from the first byte.
func TestMailpitImplicitTLS(t *testing.T) {
	mp := startMailpit(t, "bot", "pw-2", true)
	db := testWarehouse(t)
	o := testOptions(t, db)
	o.SMTP = mp.smtp("bot", "pw-2", true)
	d := testDelivery(t, strings.Replace(pack, "format: both", "format: xlsx", 1))
	res, err := Deliver(context.Background(), o, Occurrence{Delivery: d, AsOf: time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)})
	if err != nil || res.State != "sent" {
		t.Fatalf("%v, %+v", err, res)
	}
	list := mp.messages(t)
	if len(list) != 1 || list[0].Subject != res.Subject {
		t.Fatalf("arrived: %+v", list)
	}
	if msg := mp.message(t, list[0].ID); len(msg.Attachments) != 2 {
		t.Errorf("%d attachments, want the two workbooks", len(msg.Attachments))
	}
}

// csvTotal sums a column of a report's CSV.
func csvTotal(t *testing.T, path, column string) int64 {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(bytes.NewReader(bytes.TrimPrefix(b, []byte("\ufeff")))).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	col := slices.Index(rows[0], column)
	if col < 0 {
		t.Fatalf("%s: no column %q in %v", path, column, rows[0])
	}
	var sum int64
	for _, r := range rows[1:] {
		n, err := strconv.ParseInt(r[col], 10, 64)
		if err != nil {
			t.Fatalf("%s: %q: %v", path, r[col], err)
		}
		sum += n
	}
	if sum == 0 {
		t.Fatalf("%s: %s sums to 0: the check proves nothing", path, column)
	}
	return sum
}

// idThousands writes n as Indonesian does: 1.234.567.
func idThousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte('.')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// TestOutboxIsARehearsal: docs/delivery.md's first steps, report deliver into the outbox, then
// the same with an SMTP server: the outbox's message reached nobody, so the recipients get the
// occurrence through the server, once, as a first send (not a resend); the daemon likewise
// after a restart with SMTP configured.
func TestOutboxIsARehearsal(t *testing.T) {
	mp := startMailpit(t, "finance-bot", "s3cret-pass", false)
	db := testWarehouse(t)
	o := testOptions(t, db)
	d := testDelivery(t, daily)
	ctx := context.Background()
	occ := Occurrence{Delivery: d, AsOf: time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)}
	for i, want := range []string{"outbox", "already-outbox"} {
		if res, err := Deliver(ctx, o, occ); err != nil || res.State != want {
			t.Fatalf("outbox #%d: %v %+v, want %s", i+1, err, res, want)
		}
	}
	o.SMTP = mp.smtp("finance-bot", "s3cret-pass", false)
	res, err := Deliver(ctx, o, occ)
	if err != nil || res.State != "sent" || res.Kind != "manual" {
		t.Fatalf("through the server: %v %+v", err, res)
	}
	if res, err := Deliver(ctx, o, occ); err != nil || res.State != "already" {
		t.Fatalf("through the server again: %v %+v", err, res)
	}
	list := mp.messages(t)
	if len(list) != 1 || list[0].Subject != "Laporan daily per 1 Jun 2026" {
		t.Fatalf("arrived %+v, want the pack once, unmarked", list)
	}
	es, _ := List(ctx, JournalPath(db), "daily", 5)
	if len(es) != 2 || es[0].State != "sent" || es[1].State != "outbox" || es[1].Transport != "outbox" {
		t.Errorf("journal %+v", es)
	}

	// The daemon: a day without SMTP writes the outbox, the restart with SMTP sends it.
	syncedAt(t, db, wib(t, "2026-12-01 02:30"))
	c := &clock{t: wib(t, "2026-12-01 07:00")}
	s, so := scheduler(t, db, closePack, c)
	s.Check(ctx, c.t)
	if n := len(outbox(t, so)); n != 2 { // the daily's and the close pack's
		t.Fatalf("outbox %d messages", n)
	}
	c.t = wib(t, "2026-12-01 07:30")
	s2, _ := scheduler(t, db, closePack, c)
	s2.Options.SMTP = mp.smtp("finance-bot", "s3cret-pass", false)
	s2.Check(ctx, c.t)
	s2.Check(ctx, c.t.Add(time.Minute))
	list = mp.messages(t)
	if len(list) != 2 || list[0].Subject != "Laporan close per 30 Nov 2026 (terlambat)" {
		t.Fatalf("arrived %+v, want the close pack once (late: it went out after its time)", list)
	}
}
