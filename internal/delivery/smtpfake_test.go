package delivery

import (
	"bufio"
	"context"
	"crypto/tls"
	"net"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeSMTP is a real SMTP server over TLS (smtps) written for these tests, misbehaving as told
// per connection: after the message's final "." it answers 250, drops the connection, says
// nothing, or answers 554 or 451; or it drops a connection at the greeting.
type fakeSMTP struct {
	addr  *net.TCPAddr
	roots *tls.Config

	mu       sync.Mutex
	modes    []string // per connection, the last one repeats: ok, drop-greeting, drop-after-dot, silent-after-dot, accept-then-drop, 554, 451
	conns    int
	received []fakeMessage // every message whose final "." the server read
}

type fakeMessage struct{ subject, messageID string }

func startFakeSMTP(t *testing.T, modes ...string) *fakeSMTP {
	t.Helper()
	certFile, keyFile, roots := selfSigned(t, t.TempDir())
	cert, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{cert}})
	if err != nil {
		t.Fatal(err)
	}
	f := &fakeSMTP{addr: ln.Addr().(*net.TCPAddr), modes: modes,
		roots: &tls.Config{RootCAs: roots, ServerName: "127.0.0.1", MinVersion: tls.VersionTLS12}}
	done := make(chan struct{})
	var wg sync.WaitGroup
	t.Cleanup(func() {
		close(done)
		ln.Close()
		wg.Wait()
	})
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer c.Close()
				go func() { <-done; c.Close() }()
				f.serve(c)
			}()
		}
	}()
	return f
}

func (f *fakeSMTP) setModes(modes ...string) {
	f.mu.Lock()
	f.modes, f.conns = modes, 0
	f.mu.Unlock()
}

func (f *fakeSMTP) messages() []fakeMessage {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]fakeMessage(nil), f.received...)
}

// smtp is billsync's configuration for the server: implicit TLS, no user, a short timeout.
func (f *fakeSMTP) smtp() *SMTP {
	return &SMTP{Implicit: true, Host: "127.0.0.1", Port: f.addr.Port, TLS: f.roots, Timeout: 2 * time.Second}
}

func (f *fakeSMTP) serve(c net.Conn) {
	f.mu.Lock()
	mode := "ok"
	if len(f.modes) > 0 {
		mode = f.modes[min(f.conns, len(f.modes)-1)]
	}
	f.conns++
	f.mu.Unlock()
	if mode == "drop-greeting" {
		return
	}
	r := bufio.NewReader(c)
	say := func(s string) { c.Write([]byte(s + "\r\n")) }
	say("220 fake.test ESMTP")
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return
		}
		cmd := strings.ToUpper(strings.TrimSpace(line))
		switch {
		case strings.HasPrefix(cmd, "EHLO"):
			say("250-fake.test")
			say("250 8BITMIME")
		case strings.HasPrefix(cmd, "HELO"), strings.HasPrefix(cmd, "MAIL"), strings.HasPrefix(cmd, "RCPT"),
			cmd == "NOOP", cmd == "RSET":
			say("250 ok")
		case cmd == "QUIT":
			say("221 bye")
			return
		case cmd == "DATA":
			say("354 go on")
			var m fakeMessage
			headers := true
			for {
				l, err := r.ReadString('\n')
				if err != nil {
					return // dropped before the ".": the message is nobody's
				}
				l = strings.TrimRight(l, "\r\n")
				if l == "." {
					break
				}
				if l == "" {
					headers = false
				}
				if headers {
					if v, ok := strings.CutPrefix(l, "Subject: "); ok {
						m.subject = v
					}
					if v, ok := strings.CutPrefix(l, "Message-ID: "); ok {
						m.messageID = v
					}
				}
			}
			f.mu.Lock()
			f.received = append(f.received, m)
			f.mu.Unlock()
			switch mode {
			case "drop-after-dot":
				return
			case "silent-after-dot":
				io := make([]byte, 1)
				c.Read(io) // until the client gives up and closes
				return
			case "accept-then-drop":
				say("250 2.0.0 queued")
				return
			case "554":
				say("554 5.7.1 message rejected as spam")
			case "451":
				say("451 4.3.0 try again later")
			default:
				say("250 2.0.0 queued")
			}
		default:
			say("502 not implemented")
		}
	}
}

// TestSMTPOutcomes: what a misbehaving server did is journaled as what is known of the
// message. The whole message went and no answer came: unknown, not retried in that run, and
// the next attempt sends it once, marked "(dikirim ulang)", with the same Message-ID. A 554
// after DATA is refused and final; a 451 is tried again; a server that accepted the message
// and then dropped the connection has it once; a connection dropped at the greeting is tried
// again with backoff.
func TestSMTPOutcomes(t *testing.T) {
	for _, tc := range []struct {
		modes    []string
		state    string
		attempts int
		received int
	}{
		{[]string{"drop-after-dot"}, "unknown", 1, 1},
		{[]string{"silent-after-dot"}, "unknown", 1, 1},
		{[]string{"accept-then-drop"}, "sent", 1, 1},
		{[]string{"554"}, "refused", 1, 1},
		{[]string{"451"}, "failed", 3, 3},
		{[]string{"drop-greeting", "ok"}, "sent", 2, 1},
	} {
		t.Run(tc.modes[0], func(t *testing.T) {
			srv := startFakeSMTP(t, tc.modes...)
			db := testWarehouse(t)
			o := testOptions(t, db)
			o.Retries, o.SMTP = 2, srv.smtp()
			d := testDelivery(t, daily)
			ctx := context.Background()
			occ := Occurrence{Delivery: d, AsOf: time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)}
			res, err := Deliver(ctx, o, occ)
			if res.State != tc.state || res.Attempts != tc.attempts || (err == nil) != (tc.state == "sent") {
				t.Fatalf("%v: state %s after %d attempts, err %v; want %s after %d", tc.modes, res.State, res.Attempts, err, tc.state, tc.attempts)
			}
			got := srv.messages()
			if len(got) != tc.received {
				t.Fatalf("the server read %d messages, want %d", len(got), tc.received)
			}
			for _, m := range got {
				if m.subject != "Laporan daily per 1 Jun 2026" || m.messageID != "<"+res.MessageID+">" {
					t.Errorf("message %+v, want the plain subject and Message-ID <%s>", m, res.MessageID)
				}
			}
			es, _ := List(ctx, JournalPath(db), "daily", 5)
			if len(es) != 1 || es[0].State != tc.state || es[0].Attempts != tc.attempts {
				t.Fatalf("journal %+v", es)
			}
			if tc.state == "sent" {
				return
			}
			// The scheduler does not send a refused occurrence again by itself.
			if tc.state == "refused" {
				srv.setModes("ok")
				sched := occ
				sched.Scheduled = time.Date(2026, 6, 2, 0, 0, 0, 0, time.UTC)
				if res, err := Deliver(ctx, o, sched); err != nil || res.State != "refused" || len(srv.messages()) != 1 {
					t.Fatalf("scheduled after a refusal: %v %+v", err, res)
				}
			}
			// The next attempt, the server working again: one message.
			srv.setModes("ok")
			next, err := Deliver(ctx, o, occ)
			if err != nil || next.State != "sent" {
				t.Fatalf("next attempt: %v %+v", err, next)
			}
			got = srv.messages()
			if len(got) != tc.received+1 {
				t.Fatalf("after the next attempt the server has %d messages, want %d", len(got), tc.received+1)
			}
			last := got[len(got)-1]
			if tc.state == "unknown" {
				if last.subject != "Laporan daily per 1 Jun 2026 (dikirim ulang)" || last.messageID != "<"+res.MessageID+">" || next.Kind != "resend" {
					t.Errorf("resend %+v kind %s, want marked (dikirim ulang) with the first's Message-ID <%s>", last, next.Kind, res.MessageID)
				}
			} else if last.subject != "Laporan daily per 1 Jun 2026" || last.messageID == "<"+res.MessageID+">" {
				t.Errorf("after a %s attempt (nobody has it) the message is %+v: want a plain new one", tc.state, last)
			}
			if again, err := Deliver(ctx, o, occ); err != nil || again.State != "already" || len(srv.messages()) != tc.received+1 {
				t.Errorf("third: %v %+v", err, again)
			}
		})
	}
}

// TestDaemonUnknownOutcome: the daemon sends to a server that stores the message and drops
// the connection: one copy, journaled unknown, the operators told; its next attempt sends one
// copy marked "(dikirim ulang)" with the same Message-ID; after a second unknown outcome the
// daemon leaves it to a person.
func TestDaemonUnknownOutcome(t *testing.T) {
	srv := startFakeSMTP(t, "drop-after-dot")
	db := testWarehouse(t)
	syncedAt(t, db, wib(t, "2026-12-01 02:30"))
	c := &clock{t: wib(t, "2026-12-01 07:00")}
	s, o := scheduler(t, db, closePack, c)
	alerts := o // the alerts into the outbox, the deliveries through the server
	s.Alerts = &Alerter{To: []string{"ops@toko.example"}, Options: alerts, Log: quiet}
	s.Options.SMTP, s.Options.Retries = srv.smtp(), 2
	ctx := context.Background()
	step := func(at string, want int) {
		t.Helper()
		c.t = wib(t, at)
		s.Check(ctx, c.t)
		if got := len(srv.messages()); got != want {
			t.Fatalf("at %s the server has %d copies, want %d", at, got, want)
		}
	}
	step("2026-12-01 07:00", 1)
	step("2026-12-01 07:01", 1) // not retried before the daemon's next attempt
	step("2026-12-01 07:06", 2) // the next attempt: one copy, marked
	step("2026-12-01 08:00", 2) // unknown twice: a person decides
	step("2026-12-02 07:00", 2)
	got := srv.messages()
	if got[1].subject != "Laporan close per 30 Nov 2026 (dikirim ulang)" || got[1].messageID != got[0].messageID {
		t.Errorf("copies %+v: want the second marked, with the first's Message-ID", got)
	}
	es, _ := List(ctx, JournalPath(db), "close", 5)
	if len(es) != 2 || es[0].State != "unknown" || es[1].State != "unknown" || es[0].Kind != "resend" || es[0].Attempts != 1 {
		t.Errorf("journal %+v", es)
	}
	subs := strings.Join(subjects(t, alerts), "\n")
	if !strings.Contains(subs, "[billsync] PROBLEM: delivery close failed") {
		t.Errorf("alerts: %s", subs)
	}
	body := ""
	for _, p := range outbox(t, alerts) {
		body += qpDecode(readFile(t, p))
	}
	if !strings.Contains(body, "report deliver close -as-of 2026-11-30") || !strings.Contains(body, "may have it") {
		t.Errorf("the alert does not say what is known and what to run:\n%s", body)
	}
}

// TestAlertUnknownOutcome: an alert the server took whole without answering is sent once more,
// marked "(resent)", and then no more: not one copy a minute.
func TestAlertUnknownOutcome(t *testing.T) {
	srv := startFakeSMTP(t, "drop-after-dot")
	db := testWarehouse(t)
	o := testOptions(t, db)
	c := &clock{t: wib(t, "2026-12-01 07:00")}
	o.Now, o.SMTP = c.now, srv.smtp()
	a := &Alerter{To: []string{"ops@toko.example"}, Options: o, Log: quiet}
	ctx := context.Background()
	a.State(ctx, KeySyncFailed, false, "sync failed", "the service answered 503")
	for i := 1; i <= 5; i++ {
		c.t = c.t.Add(2 * time.Minute)
		a.State(ctx, KeySyncFailed, false, "sync failed", "the service answered 503")
	}
	got := srv.messages()
	if len(got) != 2 || got[0].subject != "[billsync] PROBLEM: sync failed" || got[1].subject != "[billsync] PROBLEM: sync failed (resent)" {
		t.Fatalf("the server got %+v: want the alert and one resend", got)
	}
}
