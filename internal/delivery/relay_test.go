package delivery

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/billsync/billsync/internal/cli/clitest"
	"time"
)

// TestMailpitRelayWithoutTLS: BILLSYNC_SMTP_TLS=none sends through a relay that speaks no TLS
// (mailpit without a certificate offers no STARTTLS), without a login as an office relay on
// port 25 takes mail, and with one when the relay is on this machine (a loopback address).
func TestMailpitRelayWithoutTLS(t *testing.T) {
	for _, tc := range []struct{ name, user, password, url string }{
		{"no login", "", "", "smtp://127.0.0.1:%d"},
		{"login on loopback", "relay-user", "relay-pass", "smtp://relay-user@127.0.0.1:%d"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mp := startMailpitTLS(t, tc.user, tc.password, "none")
			db := testWarehouse(t)
			o := testOptions(t, db)
			pwFile := ""
			if tc.password != "" {
				pwFile = writeFile(t, tc.password)
			}
			s, err := ParseSMTP(fmt.Sprintf(tc.url, mp.smtpPort), pwFile, "none")
			if err != nil {
				t.Fatal(err)
			}
			o.SMTP = s
			d := testDelivery(t, daily)
			res, err := Deliver(context.Background(), o, Occurrence{Delivery: d, AsOf: time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)})
			if err != nil || res.State != "sent" {
				t.Fatalf("%v, %+v", err, res)
			}
			list := mp.messages(t)
			if len(list) != 1 || list[0].Subject != res.Subject {
				t.Fatalf("arrived %+v, want one %q", list, res.Subject)
			}
			es, err := List(context.Background(), JournalPath(db), "daily", 5)
			if err != nil || len(es) != 1 || !strings.HasSuffix(es[0].Transport, "(no TLS)") {
				t.Fatalf("journal %v %+v: want the transport marked (no TLS)", err, es)
			}
		})
	}
}

// TestSMTPServerLacks: a server without what the settings ask of it (STARTTLS for smtp://,
// TLS from the first byte for smtps://, AUTH for a URL with a user) is said in billsync's
// words, naming the setting that changes it, once: refused, not retried (it answers the same
// until a person changes the server or the setting), and the daemon does not try it again.
func TestSMTPServerLacks(t *testing.T) {
	for _, tc := range []struct {
		name, server, mode, user, url, want string
	}{
		{"no STARTTLS", "none", "", "", "smtp://127.0.0.1:%d", "offers no STARTTLS, and smtp:// requires it: BILLSYNC_SMTP_TLS=none sends without TLS"},
		{"not TLS first", "none", "", "", "smtps://127.0.0.1:%d", "does not speak TLS from the first byte (smtps://)"},
		{"no AUTH", "starttls", "", "bot", "smtp://bot@127.0.0.1:%d", `offers no AUTH (no login), and BILLSYNC_SMTP_URL names user "bot"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mp := startMailpitTLS(t, "", "", tc.server)
			db := testWarehouse(t)
			o := testOptions(t, db)
			o.Retries = 2
			pwFile := ""
			if tc.user != "" {
				pwFile = writeFile(t, "pw-that-must-not-show")
			}
			s, err := ParseSMTP(fmt.Sprintf(tc.url, mp.smtpPort), pwFile, tc.mode)
			if err != nil {
				t.Fatal(err)
			}
			s.TLS, s.Timeout = mp.smtp("", "", false).TLS, 5*time.Second
			o.SMTP = s
			d := testDelivery(t, daily)
			occ := Occurrence{Delivery: d, AsOf: time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)}
			res, err := Deliver(context.Background(), o, occ)
			if err == nil || res.State != "refused" || res.Attempts != 1 {
				t.Fatalf("state %s after %d attempts, err %v: want refused after 1", res.State, res.Attempts, err)
			}
			msg := err.Error()
			if !strings.Contains(msg, tc.want) {
				t.Errorf("error %q\nwant it to say %q", msg, tc.want)
			}
			for _, libs := range []string{"TLSMandatory", "STARTTLS mode set to", "first record does not look like", "server does not support SMTP AUTH", "pw-that-must-not-show"} {
				if strings.Contains(msg, libs) {
					t.Errorf("error %q carries %q", msg, libs)
				}
			}
			if n := strings.Count(msg, "smtp server "); n != 1 {
				t.Errorf("error %q says it %d times, want once", msg, n)
			}
			es, err := List(context.Background(), JournalPath(db), "daily", 5)
			if err != nil || len(es) != 1 || es[0].State != "refused" || es[0].Attempts != 1 || !strings.Contains(es[0].Error, tc.want) {
				t.Fatalf("journal %v %+v", err, es)
			}
			if n := len(mp.messages(t)); n != 0 {
				t.Errorf("%d messages arrived", n)
			}
			sched := occ
			sched.Scheduled = time.Date(2026, 6, 2, 0, 0, 0, 0, time.UTC)
			if res, err := Deliver(context.Background(), o, sched); err != nil || res.State != "refused" {
				t.Errorf("the daemon after it: %v %+v, want refused without a try", err, res)
			}
			if es, _ := List(context.Background(), JournalPath(db), "daily", 5); len(es) != 1 {
				t.Errorf("the daemon tried again: %d journal rows", len(es))
			}
		})
	}
}

// TestDeliverTestTo: report deliver NAME -test-to ADDR sends the occurrence to ADDR alone,
// marked as a test in the subject in the delivery's language, journaled as a test; the
// occurrence is still owed to its recipients (the next send goes to them, plainly), and a test
// after it is sent sends a test again, never "already".
func TestDeliverTestTo(t *testing.T) {
	mp := startMailpit(t, "finance-bot", "s3cret-pass", false)
	db := testWarehouse(t)
	o := testOptions(t, db)
	o.SMTP = mp.smtp("finance-bot", "s3cret-pass", false)
	ctx := context.Background()
	asOf := time.Date(2026, 5, 31, 0, 0, 0, 0, time.UTC)
	id := testDelivery(t, pack)
	en := testDelivery(t, strings.Replace(pack, "name: close", "name: close-en\n    locale: en", 1))
	tester := []string{"tester@toko.example"}

	for _, tc := range []struct {
		d    *Delivery
		want string
	}{
		{id, "[UJI] Laporan close per 31 Mei 2026"},
		{en, "[TEST] close-en reports as of 31 May 2026"},
	} {
		res, err := Deliver(ctx, o, Occurrence{Delivery: tc.d, AsOf: asOf, TestTo: tester})
		if err != nil || res.State != "sent" || res.Kind != "test" || res.Subject != tc.want {
			t.Fatalf("test send: %v, %+v; want sent, kind test, subject %q", err, res, tc.want)
		}
	}
	list := mp.messages(t)
	if len(list) != 2 {
		t.Fatalf("%d messages arrived, want 2", len(list))
	}
	for _, m := range list {
		if len(m.To) != 1 || m.To[0].Address != "tester@toko.example" || len(m.Cc) != 0 {
			t.Errorf("test %q went to %v cc %v, want the tester only", m.Subject, m.To, m.Cc)
		}
	}
	if body := mp.message(t, list[0].ID).Text; !strings.Contains(body, "finance@toko.example") || !strings.Contains(body, "-test-to") {
		t.Errorf("the test's body does not say who the recipients are: %s", body)
	}
	es, err := List(ctx, JournalPath(db), "close", 5)
	if err != nil || len(es) != 1 || es[0].Kind != "test" || es[0].State != "sent" || es[0].Recipients != "tester@toko.example" {
		t.Fatalf("journal %v %+v", err, es)
	}

	// The occurrence itself: to its recipients, not "already".
	res, err := Deliver(ctx, o, Occurrence{Delivery: id, AsOf: asOf, Scheduled: asOf.Add(24 * time.Hour)})
	if err != nil || res.State != "sent" || res.Subject != "Laporan close per 31 Mei 2026" {
		t.Fatalf("after a test: %v %+v, want the occurrence sent", err, res)
	}
	var to []string
	for _, a := range mp.message(t, mp.messages(t)[0].ID).To {
		to = append(to, a.Address)
	}
	slices.Sort(to)
	if strings.Join(to, ",") != "cfo@toko.example,finance@toko.example" {
		t.Errorf("the occurrence went to %v", to)
	}
	// A test after it is a test again; the occurrence stays sent once.
	if res, err := Deliver(ctx, o, Occurrence{Delivery: id, AsOf: asOf, TestTo: tester}); err != nil || res.State != "sent" || res.Kind != "test" {
		t.Fatalf("a test after the send: %v %+v", err, res)
	}
	if res, err := Deliver(ctx, o, Occurrence{Delivery: id, AsOf: asOf}); err != nil || res.State != "already" {
		t.Fatalf("after a test and a send: %v %+v, want already", err, res)
	}
	if n := len(mp.messages(t)); n != 4 {
		t.Errorf("%d messages arrived, want 4 (three tests, one send)", n)
	}
}

// writeFile writes text into a new file and returns its path.
func writeFile(t *testing.T, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(p, []byte(text+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestOutboxNamesInTheZone: an outbox file's name, and the directory of a message sent again,
// carry the time in BILLSYNC_TZ with its offset: they read on the clock of the schedule and
// the messages ("07:00 WIB"), sort by time, and never clash.
func TestOutboxNamesInTheZone(t *testing.T) {
	db := testWarehouse(t)
	o := testOptions(t, db)
	d := testDelivery(t, daily)
	ctx := context.Background()
	asOf := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	before := time.Now()
	var names []string
	for _, occ := range []Occurrence{{Delivery: d, AsOf: asOf}, {Delivery: d, AsOf: asOf, Again: true}, {Delivery: d, AsOf: asOf, DryRun: true}} {
		res, err := Deliver(ctx, o, occ)
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, filepath.Base(res.EML))
		if occ.Again {
			names = append(names, filepath.Base(filepath.Dir(filepath.Dir(res.Files[0].Path))+"/"+filepath.Base(filepath.Dir(res.Files[0].Path))))
		}
	}
	for _, n := range names {
		if bad := clitest.Unzoned(n, o.loc(), before); len(bad) > 0 {
			t.Errorf("%s: %q is not on the WIB clock", n, bad)
		}
	}
	box := outbox(t, o)
	if len(box) != 3 || !slices.IsSorted(box) {
		t.Fatalf("outbox %v: want three names, sorted as written", box)
	}
	stamp, _, _ := strings.Cut(filepath.Base(box[0]), "_")
	at, err := time.Parse(stampLayout, stamp)
	if err != nil || at.Before(before.Truncate(time.Microsecond)) || time.Since(at) > time.Minute || !strings.HasSuffix(stamp, "+0700") {
		t.Errorf("outbox name %s: %v %v, want the time it was written, +0700", box[0], at, err)
	}
}
