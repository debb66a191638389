package delivery

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/billsync/billsync/internal/duckfile"
	"github.com/xuri/excelize/v2"
)

const daily = `deliveries:
  - name: daily
    reports: [aging]
    schedule: "0 7 * * *"
    as_of: yesterday
    to: [finance@toko.example]
`

func outbox(t *testing.T, o Options) []string {
	t.Helper()
	m, _ := filepath.Glob(filepath.Join(o.Outbox, "*.eml"))
	return m
}

func readFile(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestOutboxOnce: without SMTP the message goes to the outbox; an occurrence is sent once,
// -again sends it once more journaled as again, -dry-run writes and journals nothing.
func TestOutboxOnce(t *testing.T) {
	db := testWarehouse(t)
	o := testOptions(t, db)
	d := testDelivery(t, daily)
	ctx := context.Background()
	occ := Occurrence{Delivery: d, AsOf: time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)}

	dry := occ
	dry.DryRun = true
	res, err := Deliver(ctx, o, dry)
	if err != nil || res.State != "dry-run" || len(outbox(t, o)) != 1 {
		t.Fatalf("dry run: %v %+v, outbox %v", err, res, outbox(t, o))
	}
	if _, err := os.Stat(JournalPath(db)); err == nil {
		t.Error("a dry run wrote the journal")
	}
	os.Remove(res.EML)

	res, err = Deliver(ctx, o, occ)
	if err != nil || res.State != "outbox" {
		t.Fatalf("%v %+v", err, res)
	}
	box := outbox(t, o)
	if len(box) != 1 || !strings.Contains(readFile(t, box[0]), "Subject: Laporan daily per 1 Jun 2026") {
		t.Fatalf("outbox %v", box)
	}
	if res, err = Deliver(ctx, o, occ); err != nil || res.State != "already-outbox" || len(outbox(t, o)) != 1 {
		t.Fatalf("again without -again: %v %+v", err, res)
	}
	again := occ
	again.Again = true
	if res, err = Deliver(ctx, o, again); err != nil || res.State != "outbox" || len(outbox(t, o)) != 2 {
		t.Fatalf("-again: %v %+v, outbox %v", err, res, outbox(t, o))
	}
	if !strings.Contains(res.Subject, "(dikirim lagi)") {
		t.Errorf("-again subject %q", res.Subject)
	}
	es, err := List(ctx, JournalPath(db), "", 10)
	if err != nil || len(es) != 2 || es[0].Kind != "again" || es[1].Kind != "manual" || es[0].State != "outbox" {
		t.Fatalf("journal %v %+v", err, es)
	}
}

// TestCrashResendsOnce: a crash after the server accepted the message but before the journal
// recorded it leaves the row in state sending; the next deliver sends it once more, marked
// "(dikirim ulang)", and the one after sends nothing.
func TestCrashResendsOnce(t *testing.T) {
	db := testWarehouse(t)
	o := testOptions(t, db)
	d := testDelivery(t, daily)
	ctx := context.Background()
	occ := Occurrence{Delivery: d, AsOf: time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)}

	// The crash: the journal keeps what was committed before it, as a killed process's does.
	ctxCrash, cancel := context.WithCancel(ctx)
	testAfterAccept = func() { cancel() }
	defer func() { testAfterAccept = nil }()
	res, err := Deliver(ctxCrash, o, occ)
	testAfterAccept = nil
	if res.State != "outbox" {
		t.Fatalf("%v %+v", err, res)
	}
	// Undo the record the cancelled context let through, as a kill would have prevented it.
	execJournal(t, JournalPath(db), "UPDATE deliveries SET state = 'sending', finished_at = NULL")

	first := res.MessageID
	res, err = Deliver(ctx, o, occ)
	if err != nil || res.State != "outbox" || res.Kind != "resend" || !strings.Contains(res.Subject, "(dikirim ulang)") ||
		res.MessageID != first {
		t.Fatalf("after the crash: %v %+v (want the first's Message-ID %s)", err, res, first)
	}
	if res, err = Deliver(ctx, o, occ); err != nil || res.State != "already-outbox" {
		t.Fatalf("third: %v %+v", err, res)
	}
	if n := len(outbox(t, o)); n != 2 {
		t.Errorf("%d messages, want the first and one resend", n)
	}
	es, _ := List(ctx, JournalPath(db), "daily", 10)
	if len(es) != 2 || es[1].State != "unknown" || es[0].State != "outbox" || es[0].Kind != "resend" {
		t.Errorf("journal %+v", es)
	}
}

func execJournal(t *testing.T, path, stmt string) {
	t.Helper()
	db, err := duckfile.Open(path, duckfile.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(stmt); err != nil {
		t.Fatal(err)
	}
}

// TestStaleAndLimits: an as-of date no sync has finished after goes out marked stale, in the
// subject, the body and on the summary sheet; files above max_attach_mb stay on the server and
// the body says where.
func TestStaleAndLimits(t *testing.T) {
	db := testWarehouse(t)
	o := testOptions(t, db)
	d := testDelivery(t, strings.Replace(daily, "    to:", "    max_attach_mb: 0.01\n    to:", 1))
	// The warehouse's sync finished at the test's run time: tomorrow has not ended yet.
	tomorrow := time.Now().In(o.Report.TZ.Location()).AddDate(0, 0, 1)
	asOf := time.Date(tomorrow.Year(), tomorrow.Month(), tomorrow.Day(), 0, 0, 0, 0, time.UTC)
	res, err := Deliver(context.Background(), o, Occurrence{Delivery: d, AsOf: asOf})
	if err != nil || res.State != "outbox" {
		t.Fatalf("%v %+v", err, res)
	}
	if !strings.HasPrefix(res.Subject, "[DATA BELUM TERBARU] ") || !strings.Contains(res.Stale, "tidak ada sinkronisasi akun main yang selesai sejak") {
		t.Errorf("subject %q, stale %q", res.Subject, res.Stale)
	}
	eml := readFile(t, outbox(t, o)[0])
	if n := strings.Count(qpDecode(eml), "PERHATIAN: angka-angka ini"); n != 2 {
		t.Errorf("the staleness is said %d times, want once in each part", n)
	}
	if strings.Contains(eml, "Content-Disposition: attachment") {
		t.Error("files above the limit were attached")
	}
	for _, want := range []string{"PERHATIAN: angka-angka ini mungkin belum mencerminkan", "Berkas tidak dilampirkan", filepath.Join(o.Report.ReportsOut, "deliveries", "daily")} {
		if !strings.Contains(qpDecode(eml), want) {
			t.Errorf("the message lacks %q", want)
		}
	}
	summary := false
	for _, f := range res.Files {
		if f.Attached {
			t.Errorf("%s marked attached", f.Path)
		}
		if strings.HasSuffix(f.Path, ".xlsx") {
			x, err := excelize.OpenFile(f.Path)
			if err != nil {
				t.Fatal(err)
			}
			rows, err := x.GetRows(x.GetSheetName(0))
			x.Close()
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range rows {
				summary = summary || strings.Contains(strings.Join(r, " "), "PERHATIAN: angka-angka ini mungkin belum mencerminkan")
			}
		}
	}
	if !summary {
		t.Error("the summary sheet does not say the figures may be stale")
	}
}

// qpDecode undoes quoted-printable's soft line breaks, enough to search the text.
func qpDecode(s string) string {
	s = strings.ReplaceAll(s, "=\r\n", "")
	s = strings.ReplaceAll(s, "=\n", "")
	return strings.NewReplacer("=3D", "=", "=C2=A0", "\u00a0").Replace(s)
}

// TestUnreachableServer: a server that does not answer is a journaled failure after the
// retries, and the next deliver tries again.
func TestUnreachableServer(t *testing.T) {
	db := testWarehouse(t)
	o := testOptions(t, db)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close() // nothing listens there now
	o.SMTP = &SMTP{Host: "127.0.0.1", Port: port}
	o.Retries = 2
	d := testDelivery(t, daily)
	occ := Occurrence{Delivery: d, AsOf: time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)}
	res, err := Deliver(context.Background(), o, occ)
	if err == nil || res.State != "failed" || res.Attempts != 3 {
		t.Fatalf("%v %+v", err, res)
	}
	es, _ := List(context.Background(), JournalPath(db), "", 10)
	if len(es) != 1 || es[0].State != "failed" || es[0].Attempts != 3 || !strings.Contains(es[0].Error, "connection refused") {
		t.Fatalf("journal %+v", es)
	}
	o.SMTP = nil
	if res, err = Deliver(context.Background(), o, occ); err != nil || res.State != "outbox" {
		t.Fatalf("after the failure: %v %+v", err, res)
	}
}

// TestJournalBusy: while one process delivers, another does not send the same occurrence.
func TestJournalBusy(t *testing.T) {
	db := testWarehouse(t)
	o := testOptions(t, db)
	lock, err := duckfile.Acquire(JournalPath(db))
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Release()
	_, err = Deliver(context.Background(), o, Occurrence{Delivery: testDelivery(t, daily), AsOf: time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)})
	if err == nil || !strings.Contains(err.Error(), ErrBusy.Error()) || len(outbox(t, o)) != 0 {
		t.Fatalf("%v, outbox %v", err, outbox(t, o))
	}
}

func TestParseSMTP(t *testing.T) {
	dir := t.TempDir()
	pw := filepath.Join(dir, "pw")
	os.WriteFile(pw, []byte("app-password-123\n"), 0o600)
	for _, tc := range []struct {
		url, file, want, err string
		mode                 string // BILLSYNC_SMTP_TLS
	}{
		{"smtp://bot@mail.example:2525", pw, "smtp://bot@mail.example:2525", "", ""},
		{"smtps://bot%40toko.example@smtp.example", pw, "smtps://bot%40toko.example@smtp.example:465", "", ""},
		{"smtp://relay.internal", "", "smtp://relay.internal:587", "", ""},
		{"smtp://billing@toko.co.id@smtp.gmail.com:587", pw, "smtp://billing%40toko.co.id@smtp.gmail.com:587", "", ""},
		{"", "", "", "", ""},
		{"http://x", "", "", "scheme \"http\"", ""},
		{"smtp://bot:pw@x", "", "", "holds a password", ""},
		{"smtp://bot@x", "", "", "set BILLSYNC_SMTP_PASSWORD_FILE", ""},
		{"smtp://bot@x", filepath.Join(dir, "missing"), "", "no such file", ""},
		{"smtp://x", pw, "", "names no user", ""},
		{"", pw, "", "without BILLSYNC_SMTP_URL", ""},
		// BILLSYNC_SMTP_TLS: agreeing with the scheme, none for a relay, contradictions refused.
		{"smtp://relay.internal", "", "smtp://relay.internal:25 (no TLS)", "", "none"},
		{"smtp://relay.internal:2525", "", "smtp://relay.internal:2525 (no TLS)", "", "none"},
		{"smtp://bot@127.0.0.1:1025", pw, "smtp://bot@127.0.0.1:1025 (no TLS)", "", "none"},
		{"smtp://bot@localhost", pw, "smtp://bot@localhost:25 (no TLS)", "", "none"},
		{"smtp://bot@relay.internal", pw, "", "BILLSYNC_SMTP_TLS=none with user \"bot\": the password would cross the network to relay.internal in plain text", "none"},
		{"smtp://bot@10.0.0.25", pw, "", "in plain text", "none"},
		{"smtp://bot@x", pw, "smtp://bot@x:587", "", "starttls"},
		{"smtps://bot@x", pw, "smtps://bot@x:465", "", "tls"},
		{"smtp://x", "", "", "BILLSYNC_SMTP_TLS=tls contradicts BILLSYNC_SMTP_URL's smtp://", "tls"},
		{"smtps://x", "", "", "BILLSYNC_SMTP_TLS=starttls contradicts BILLSYNC_SMTP_URL's smtps://", "starttls"},
		{"smtps://x", "", "", "BILLSYNC_SMTP_TLS=none contradicts", "none"},
		{"smtp://x", "", "", "BILLSYNC_SMTP_TLS \"plain\": want one of starttls, tls, none", "plain"},
		{"", "", "", "BILLSYNC_SMTP_TLS=none is set without BILLSYNC_SMTP_URL", "none"},
	} {
		s, err := ParseSMTP(tc.url, tc.file, tc.mode)
		switch {
		case tc.err != "":
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q: %v, want %q", tc.url, err, tc.err)
			}
		case err != nil:
			t.Errorf("%q: %v", tc.url, err)
		case s == nil && tc.want != "" || s != nil && s.String() != tc.want:
			t.Errorf("%q: %v, want %s", tc.url, s, tc.want)
		case s != nil && s.User != "" && s.Password != "app-password-123":
			t.Errorf("%q: password %q", tc.url, s.Password)
		}
		if err != nil && strings.Contains(err.Error(), "app-password") {
			t.Errorf("%q: the error shows the password", tc.url)
		}
	}
}
