package delivery

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/mail"
	"net/textproto"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/billsync/billsync/internal/config"
	"github.com/billsync/billsync/internal/report"
	gomail "github.com/wneessen/go-mail"
)

// Options are what every occurrence needs beyond its delivery: the report settings, where the
// warehouse and the files are, and how messages leave.
type Options struct {
	// Report are the settings report would use (the command's config.Report, whole, as it read
	// and checked them): the zone of as-of dates and of the schedule, currency, locale, CSV
	// dialect, report variables' defaults, and ReportsOut, under which an occurrence's files go
	// (ReportsOut/deliveries/NAME/AS-OF/). A delivery renders with them, its own locale,
	// csv_dialect and vars overriding theirs (Delivery.Settings); nothing is rebuilt field by
	// field, so a new report setting reaches deliveries without a line here. An unset one is its
	// declared default.
	Report     config.Report
	DB         string // the published warehouse
	JobJournal string // the write-job journal the reports read; "" = beside DB
	Journal    string // the delivery journal; "" = JournalPath(DB)
	Outbox     string // .eml files without SMTP, and of -dry-run
	From       string
	SMTP       *SMTP // nil: the outbox
	// Retries is how many times a failed send is tried again, Backoff the wait before the first
	// retry, doubled each time.
	Retries int
	Backoff time.Duration
	Log     *slog.Logger
	Now     func() time.Time // nil: time.Now
}

// loc is the zone of the report settings (BILLSYNC_TZ).
func (o *Options) loc() *time.Location {
	if o.Report.TZ.IsZero() {
		return config.WithDefaults(o.Report).TZ.Location()
	}
	return o.Report.TZ.Location()
}

func (o *Options) now() time.Time {
	if o.Now != nil {
		return o.Now()
	}
	return time.Now()
}

func (o *Options) journalPath() string {
	if o.Journal != "" {
		return o.Journal
	}
	return JournalPath(o.DB)
}

// SMTP is an SMTP server to send through: BILLSYNC_SMTP_URL and the password of
// BILLSYNC_SMTP_PASSWORD_FILE.
type SMTP struct {
	Implicit bool // smtps://: TLS from the first byte; else STARTTLS, required (unless Plain)
	// Plain (BILLSYNC_SMTP_TLS=none): no TLS at all, for a relay inside the network. A
	// password then only ever goes to a loopback address (ParseSMTP refuses the rest).
	Plain    bool
	Host     string
	Port     int
	User     string
	Password string // never logged, never in an error
	// TLS is the TLS configuration; nil = the system's roots, verifying the host (tests add
	// their own root).
	TLS *tls.Config
	// Timeout bounds each exchange with the server, the answer to the message's final "."
	// included; 0 = a minute.
	Timeout time.Duration
}

// String is the server without the password, for logs and the journal.
func (s *SMTP) String() string {
	scheme := "smtp"
	if s.Implicit {
		scheme = "smtps"
	}
	user := ""
	if s.User != "" {
		user = url.QueryEscape(s.User) + "@"
	}
	plain := ""
	if s.Plain {
		plain = " (no TLS)"
	}
	return fmt.Sprintf("%s://%s%s:%d%s", scheme, user, s.Host, s.Port, plain)
}

// TLSModes are BILLSYNC_SMTP_TLS's values ("" = the URL's scheme decides).
var TLSModes = []string{"starttls", "tls", "none"}

// ParseSMTP reads BILLSYNC_SMTP_URL, BILLSYNC_SMTP_TLS (mode) and the password file; "" is no
// SMTP (the outbox). The setting and the scheme must agree: unset, the scheme decides
// (smtp:// STARTTLS, smtps:// TLS from the first byte); starttls goes with smtp://, tls with
// smtps://, none with smtp:// only (port 25 unless the URL names one). Anything else
// contradicts itself and is refused, as is a password over plain text to anything but a
// loopback address.
func ParseSMTP(raw, passwordFile, mode string) (*SMTP, error) {
	if mode != "" && !slices.Contains(TLSModes, mode) {
		return nil, fmt.Errorf("BILLSYNC_SMTP_TLS %q: want one of %s (or unset: the URL's scheme decides)", mode, strings.Join(TLSModes, ", "))
	}
	if raw == "" {
		if passwordFile != "" {
			return nil, errors.New("BILLSYNC_SMTP_PASSWORD_FILE is set without BILLSYNC_SMTP_URL")
		}
		if mode != "" {
			return nil, fmt.Errorf("BILLSYNC_SMTP_TLS=%s is set without BILLSYNC_SMTP_URL", mode)
		}
		return nil, nil
	}
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("BILLSYNC_SMTP_URL: %v", redact(err.Error()))
	}
	s := &SMTP{Host: u.Hostname()}
	switch u.Scheme {
	case "smtp":
		s.Port = 587
	case "smtps":
		s.Implicit, s.Port = true, 465
	default:
		return nil, fmt.Errorf("BILLSYNC_SMTP_URL: scheme %q: want smtp:// (STARTTLS) or smtps:// (implicit TLS)", u.Scheme)
	}
	switch {
	case mode == "tls" && !s.Implicit:
		return nil, errors.New("BILLSYNC_SMTP_TLS=tls contradicts BILLSYNC_SMTP_URL's smtp:// (STARTTLS): use smtps://, or unset BILLSYNC_SMTP_TLS")
	case mode == "starttls" && s.Implicit:
		return nil, errors.New("BILLSYNC_SMTP_TLS=starttls contradicts BILLSYNC_SMTP_URL's smtps:// (TLS from the first byte): use smtp://, or unset BILLSYNC_SMTP_TLS")
	case mode == "none" && s.Implicit:
		return nil, errors.New("BILLSYNC_SMTP_TLS=none contradicts BILLSYNC_SMTP_URL's smtps:// (TLS from the first byte): use smtp://HOST:25")
	case mode == "none":
		s.Plain, s.Port = true, 25
	}
	if _, set := u.User.Password(); set {
		return nil, errors.New("BILLSYNC_SMTP_URL holds a password: put it in BILLSYNC_SMTP_PASSWORD_FILE")
	}
	if s.Host == "" {
		return nil, fmt.Errorf("BILLSYNC_SMTP_URL %q: no host", raw)
	}
	if p := u.Port(); p != "" {
		if s.Port, err = strconv.Atoi(p); err != nil || s.Port < 1 || s.Port > 65535 {
			return nil, fmt.Errorf("BILLSYNC_SMTP_URL: port %q", p)
		}
	}
	if u.Path != "" && u.Path != "/" || u.RawQuery != "" {
		return nil, fmt.Errorf("BILLSYNC_SMTP_URL %q: want scheme://USER@HOST:PORT only", raw)
	}
	s.User = u.User.Username()
	if passwordFile != "" {
		b, err := os.ReadFile(passwordFile)
		if err != nil {
			return nil, fmt.Errorf("BILLSYNC_SMTP_PASSWORD_FILE: %w", err)
		}
		s.Password = strings.TrimRight(string(b), "\r\n")
		if s.Password == "" {
			return nil, fmt.Errorf("BILLSYNC_SMTP_PASSWORD_FILE %s is empty", passwordFile)
		}
	}
	if s.User != "" && s.Password == "" {
		return nil, fmt.Errorf("BILLSYNC_SMTP_URL names user %q: set BILLSYNC_SMTP_PASSWORD_FILE", s.User)
	}
	if s.User == "" && s.Password != "" {
		return nil, errors.New("BILLSYNC_SMTP_PASSWORD_FILE is set but BILLSYNC_SMTP_URL names no user (smtp://USER@HOST:587)")
	}
	if s.Plain && s.Password != "" && !loopback(s.Host) {
		return nil, fmt.Errorf("BILLSYNC_SMTP_TLS=none with user %q: the password would cross the network to %s in plain text; "+
			"a relay without TLS takes mail without AUTH (drop the user and BILLSYNC_SMTP_PASSWORD_FILE), or use TLS (unset BILLSYNC_SMTP_TLS)",
			s.User, s.Host)
	}
	return s, nil
}

// loopback says whether host is this machine by its name alone (no DNS: a name that resolves
// to a loopback address today may not tomorrow).
func loopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func redact(s string) string {
	if i := strings.Index(s, "://"); i >= 0 {
		if j := strings.Index(s[i:], "@"); j >= 0 {
			return s[:i+3] + "…" + s[i+j:]
		}
	}
	return s
}

// Occurrence is one delivery as of one date.
type Occurrence struct {
	Delivery  *Delivery
	AsOf      time.Time // a calendar date (midnight UTC)
	Scheduled time.Time // the schedule's time; zero for report deliver
	Late      bool
	Again     bool // send even if sent (report deliver -again)
	DryRun    bool // write the .eml into the outbox, send and journal nothing
	// TestTo (report deliver -test-to): send the occurrence to these addresses only, marked
	// as a test in the subject; journaled as kind test, which no later attempt counts (it
	// consumes nothing: the occurrence is still owed to its recipients).
	TestTo []string
	// SyncFailed is what the caller knows of a sync that failed after the published one
	// ("" = nothing): it makes the occurrence stale.
	SyncFailed string
	// WaitUntil: while the figures are stale and this time is ahead, Deliver sends nothing and
	// returns the state waiting (the daemon waits for a sync up to the delivery's stale_wait).
	WaitUntil time.Time
}

// Result is what became of an occurrence.
type Result struct {
	// State: sent (the server accepted it), outbox (written there: a rehearsal), already
	// (sent before), already-outbox (in the outbox before, no server configured), failed
	// (nobody has it; may be tried again), refused (a 5xx answer), unknown (no answer after the
	// whole message), dry-run, waiting (for a fresh sync).
	State     string
	ID        int64 // journal row; 0 for already and dry-run
	Kind      string
	Subject   string
	MessageID string
	EML       string
	Stale     string
	Files     []fileInfo
	Attempts  int
}

// Deliver sends one occurrence unless the journal has it sent already (Again sends it once
// more); without SMTP it writes the outbox, a rehearsal that does not count as sent once a
// server is configured. The journal is locked from the lookup to the record, and a row is
// written in state sending before the message leaves and set to what is known after it (see
// SendError): an attempt whose outcome is unknown (a crash, or no answer after the whole
// message) makes the next Deliver of the occurrence send it once more marked as resent, with
// the same Message-ID. A scheduled occurrence the server refused, or whose outcome was unknown
// twice, is left to a person (report deliver).
func Deliver(ctx context.Context, o Options, occ Occurrence) (Result, error) {
	r := newOccurrenceRun(o, occ)
	if !occ.DryRun {
		j, err := openJournal(ctx, r.o.journalPath())
		if err != nil {
			return Result{State: "failed"}, err
		}
		defer func() {
			if err := j.close(); err != nil {
				r.log.Error("closing the delivery journal", "err", err)
			}
		}()
		r.j = j
	}
	// A test send consumes nothing, so the journal's earlier attempts do not decide it.
	if !occ.DryRun && r.kind != "test" {
		if res, done, err := r.consultJournal(ctx); done {
			return res, err
		}
	}
	now := r.o.now()
	fresh, res, done, err := r.awaitFreshness(ctx, now)
	if done {
		return res, err
	}
	m, res, base, err := r.prepareMessage(ctx, now, fresh, res)
	if err != nil {
		return res, err
	}
	if occ.DryRun {
		return r.dryRun(m, res)
	}
	return r.sendAndRecord(ctx, m, res, base)
}

// occurrenceRun is one Deliver call: the settings with their defaults, the delivery as it
// renders, the kind of send, and the journal (nil for a dry run). Its methods are Deliver's
// steps, in order.
type occurrenceRun struct {
	o    Options
	occ  Occurrence
	d    *Delivery
	asOf string
	log  *slog.Logger
	j    *journal
	// kind is manual, scheduled or test, and after consultJournal again or resend.
	kind string
	// prevID is the Message-ID of an attempt whose outcome is unknown: its resend carries it
	// too, so a mail client that has both shows one.
	prevID string
	// attached says the files went with the message (prepareMessage), for the log.
	attached bool
}

// newOccurrenceRun fills the report settings' defaults, renders the delivery with them and
// names the kind of send: a test send goes to the tester alone.
func newOccurrenceRun(o Options, occ Occurrence) *occurrenceRun {
	o.Report = config.WithDefaults(o.Report)
	r := &occurrenceRun{o: o, occ: occ, d: occ.Delivery.with(o.Report), asOf: occ.AsOf.Format(time.DateOnly)}
	log := o.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	r.log = log.With("delivery", r.d.Name, "as_of", r.asOf)
	r.kind = "manual"
	if !occ.Scheduled.IsZero() {
		r.kind = "scheduled"
	}
	if len(occ.TestTo) > 0 {
		// The same occurrence, to the tester alone: a copy, so the schedule's stays as it is.
		td := *r.d
		td.To, td.Cc = occ.TestTo, nil
		r.d, r.kind = &td, "test"
	}
	return r
}

// consultJournal reads the occurrence's earlier attempts and decides whether it goes (done
// false; kind then again or resend where they say so) or what it already is (done true).
func (r *occurrenceRun) consultJournal(ctx context.Context) (res Result, done bool, err error) {
	rows, err := r.j.attempts(ctx, r.d.Name, r.asOf)
	if err != nil {
		return Result{State: "failed"}, true, err
	}
	// The outbox is a rehearsal: through a server, the rows of messages written there
	// count for nothing (the recipients have none of them).
	var sent, outboxed, sending, refused bool
	var unknown int
	for _, row := range rows {
		if r.o.SMTP != nil && row.transport == "outbox" {
			continue
		}
		sent = sent || row.state == "sent"
		outboxed = outboxed || row.state == "outbox"
		sending = sending || row.state == "sending"
		switch row.state {
		case "unknown", "sending":
			unknown++
			r.prevID = row.messageID
		case "refused":
			refused = true
		case "sent", "failed", "outbox":
			refused = false
		}
	}
	if sending {
		// A crash between the hand-over and the record: it may have arrived.
		if err := r.j.interrupted(ctx, r.d.Name, r.asOf); err != nil {
			return Result{State: "failed"}, true, err
		}
		r.log.Warn("an earlier send of this occurrence was interrupted; it goes again marked as resent")
	}
	scheduled := !r.occ.Scheduled.IsZero()
	switch {
	case r.occ.Again:
		r.kind = "again"
		r.prevID = ""
	case sent:
		r.log.Info("delivery already sent")
		return Result{State: "already"}, true, nil
	case outboxed:
		r.log.Info("delivery already in the outbox")
		return Result{State: "already-outbox"}, true, nil
	case refused && scheduled:
		// The server refused it (5xx): it would answer the same. A person sends it
		// (report deliver) once the cause is fixed.
		r.log.Info("the server refused this occurrence; the daemon does not send it again")
		return Result{State: "refused", Kind: r.kind}, true, nil
	case unknown >= 2 && scheduled:
		// Sent twice without an answer: the recipients may have it twice already. A
		// person decides (report deliver sends it once more).
		r.log.Info("this occurrence's outcome is unknown twice; the daemon does not send it again")
		return Result{State: "unknown", Kind: r.kind}, true, nil
	case unknown > 0:
		r.kind = "resend"
	default:
		r.prevID = ""
	}
	return Result{}, false, nil
}

// awaitFreshness reads how fresh the published warehouse is for the occurrence. done says
// Deliver stops here: the freshness could not be read (journaled as failed), or the daemon
// waits for a sync (no warehouse yet, or stale figures while WaitUntil is ahead).
func (r *occurrenceRun) awaitFreshness(ctx context.Context, now time.Time) (fresh Freshness, res Result, done bool, err error) {
	d, occ := r.d, r.occ
	res = Result{Kind: r.kind}
	if _, err := os.Stat(r.o.DB); errors.Is(err, os.ErrNotExist) && now.Before(occ.WaitUntil) {
		// The daemon's first sync has not published yet.
		r.log.Info("delivery waits for the first sync", "until", occ.WaitUntil)
		return fresh, Result{State: "waiting", Kind: r.kind, Stale: texts(d.Locale)["stale_none"]}, true, nil
	}
	fresh, err = freshness(ctx, r.o.DB, d.Account, occ.AsOf, now, d.MaxAge.Duration, r.o.loc(), d.Locale, occ.SyncFailed)
	if err != nil {
		res, err = fail(ctx, r.j, res, row{name: d.Name, asOf: r.asOf, kind: r.kind}, d, r.o, err)
		return fresh, res, true, err
	}
	res.Stale = fresh.Stale
	if fresh.Stale != "" && now.Before(occ.WaitUntil) {
		res.State = "waiting"
		r.log.Info("delivery waits for a sync that reflects its as-of date", "until", occ.WaitUntil, "stale", fresh.Stale)
		return fresh, res, true, nil
	}
	return fresh, res, false, nil
}

// prepareMessage renders the occurrence's reports into its directory, composes the message
// (the files attached when they fit) and keeps it there as message.eml. base is the journal
// row the send starts from; an error is journaled as failed already.
func (r *occurrenceRun) prepareMessage(ctx context.Context, now time.Time, fresh Freshness, res Result) (m *gomail.Msg, _ Result, base row, err error) {
	d, occ := r.d, r.occ
	dir := r.filesDir()
	base = row{name: d.Name, asOf: r.asOf, kind: r.kind, scheduledAt: occ.Scheduled, late: occ.Late, stale: fresh.Stale,
		recipients: append(append([]string{}, d.To...), d.Cc...), syncRun: fresh.Run, syncFinished: fresh.Finished}
	failed := func(err error) (*gomail.Msg, Result, row, error) {
		res, err := fail(ctx, r.j, res, base, d, r.o, err)
		return nil, res, base, err
	}
	paths, digests, err := r.renderReports(ctx, dir, fresh)
	if err != nil {
		return failed(fmt.Errorf("reports: %w", err))
	}
	var total int64
	for _, p := range paths {
		fi, err := hashFile(p)
		if err != nil {
			return failed(err)
		}
		total += fi.Bytes
		res.Files = append(res.Files, fi)
	}
	attach := float64(total) <= d.MaxAttachMB*1e6
	for i := range res.Files {
		res.Files[i].Attached = attach
	}
	r.attached = attach
	res.MessageID = r.prevID
	if res.MessageID == "" {
		res.MessageID = messageID(d.Name, r.asOf, r.o.From)
	}
	msg, err := compose(content{d: d, recipients: append(append([]string{}, occ.Delivery.To...), occ.Delivery.Cc...),
		asOf: occ.AsOf, loc: r.o.loc(), now: now, fresh: fresh, scheduled: occ.Scheduled,
		late: occ.Late, kind: r.kind, digests: digests, files: res.Files, attached: attach, dir: dir,
		totalBytes: total, messageID: res.MessageID})
	if err != nil {
		return failed(err)
	}
	res.Subject = msg.Subject
	if m, err = mime(msg, d, r.o.From, res.MessageID, now, res.Files); err != nil {
		return failed(err)
	}
	// The message as sent, kept beside its files; in the outbox it is the delivery itself.
	res.EML = filepath.Join(dir, "message.eml")
	if err := writeEML(m, res.EML); err != nil {
		return failed(err)
	}
	base.subject, base.messageID, base.eml, base.files = msg.Subject, res.MessageID, res.EML, res.Files
	return m, res, base, nil
}

// filesDir is where the occurrence's files go. The files of its first send stay as
// journaled: a dry run, -again, a resend and a test write beside them.
func (r *occurrenceRun) filesDir() string {
	dir := filepath.Join(r.o.Report.ReportsOut, "deliveries", r.d.Name, r.asOf)
	switch {
	case r.occ.DryRun:
		dir += "_dry-run"
	case r.kind == "again" || r.kind == "resend" || r.kind == "test":
		dir += "_" + r.kind + "_" + stamp(time.Now(), r.o.loc())
	}
	return dir
}

// renderReports generates the delivery's reports into dir with the report settings and the
// delivery's overrides, a stale notice on each when the figures are stale.
func (r *occurrenceRun) renderReports(ctx context.Context, dir string, fresh Freshness) ([]string, []report.Digest, error) {
	d := r.d
	formats := []string{d.Format}
	if d.Format == "both" {
		formats = []string{"xlsx", "csv"}
	}
	notice := ""
	if fresh.Stale != "" {
		notice = fmt.Sprintf(texts(d.Locale)["stale"], report.Date(r.occ.AsOf, d.Locale), fresh.Stale)
	}
	settings := d.Settings(r.o.Report)
	settings.ReportsOut = dir
	return report.GenerateDigests(ctx, report.Options{
		Report: settings, DB: r.o.DB, Journal: r.o.JobJournal, Formats: formats, AsOf: r.occ.AsOf, Account: d.Account,
		Names: d.Reports, Vars: d.Vars, Notice: notice, Log: r.log,
	})
}

// dryRun writes the message into the outbox and journals nothing.
func (r *occurrenceRun) dryRun(m *gomail.Msg, res Result) (Result, error) {
	res.State = "dry-run"
	var err error
	res.EML, err = toOutbox(m, r.o.Outbox, r.d.Name, r.asOf, r.o.loc())
	if err != nil {
		return res, err
	}
	r.log.Info("dry run: message written, nothing sent", "eml", res.EML, "stale", res.Stale)
	return res, nil
}

// sendAndRecord journals the attempt in state sending, sends the message (retrying what left
// it with nobody) and records what became of it.
func (r *occurrenceRun) sendAndRecord(ctx context.Context, m *gomail.Msg, res Result, base row) (Result, error) {
	base.state = "sending"
	base.transport = "outbox"
	if r.o.SMTP != nil {
		base.transport = r.o.SMTP.String()
	}
	var err error
	if res.ID, err = r.j.insert(ctx, base); err != nil {
		return res, err
	}
	if sendErr := r.sendWithRetries(ctx, m, &res); sendErr != nil {
		res.State = outcome(sendErr)
		if err := r.j.finish(context.WithoutCancel(ctx), res.ID, res.State, res.Attempts, sendErr); err != nil {
			return res, errors.Join(sendErr, err)
		}
		r.log.Error("delivery "+res.State, "attempts", res.Attempts, "message_id", res.MessageID, "err", sendErr)
		return res, fmt.Errorf("delivery %s as of %s: %w", r.d.Name, r.asOf, sendErr)
	}
	res.State = "sent"
	if r.o.SMTP == nil {
		res.State = "outbox"
	}
	if testAfterAccept != nil {
		testAfterAccept()
	}
	if err := r.j.finish(context.WithoutCancel(ctx), res.ID, res.State, res.Attempts, nil); err != nil {
		return res, err
	}
	r.log.Info("delivery "+map[string]string{"sent": "sent", "outbox": "written to the outbox"}[res.State],
		"to", strings.Join(base.recipients, ", "), "via", base.transport,
		"message_id", res.MessageID, "files", len(res.Files), "attached", r.attached, "stale", res.Stale, "late", r.occ.Late)
	return res, nil
}

// sendWithRetries hands the message to the server (or the outbox) and, while the failure left
// it with nobody, tries again up to Retries times with a doubling wait. It returns the last
// attempt's error; res.Attempts counts them.
func (r *occurrenceRun) sendWithRetries(ctx context.Context, m *gomail.Msg, res *Result) error {
	var sendErr error
	for attempt := 1; ; attempt++ {
		res.Attempts = attempt
		if testBeforeSend != nil {
			testBeforeSend()
		}
		if r.o.SMTP == nil {
			var p string
			if p, sendErr = toOutbox(m, r.o.Outbox, r.d.Name, r.asOf, r.o.loc()); sendErr == nil {
				res.EML = p
			}
		} else {
			sendErr = send(ctx, r.o.SMTP, m)
		}
		// Only a failure that left the message with nobody is tried again in this run.
		if sendErr == nil || outcome(sendErr) != "failed" || attempt > r.o.Retries || ctx.Err() != nil {
			return sendErr
		}
		wait := r.o.Backoff << (attempt - 1)
		r.log.Warn("send failed; retrying", "attempt", attempt, "in", wait, "err", sendErr)
		if err := r.j.attempt(ctx, res.ID, attempt, sendErr); err != nil {
			r.log.Error("journal", "err", err)
		}
		select {
		case <-ctx.Done():
		case <-time.After(wait):
		}
	}
}

// testBeforeSend, when set by a test, runs after the journal's row in state sending is written
// and before the message leaves.
var testBeforeSend func()

// testAfterAccept, when set by a test, runs between the server's acceptance and the journal's
// record (where a crash leaves a row in state sending).
var testAfterAccept func()

// fail journals an occurrence that failed before its message left (dry runs journal nothing).
func fail(ctx context.Context, j *journal, res Result, r row, d *Delivery, o Options, err error) (Result, error) {
	res.State = "failed"
	if j == nil {
		return res, err
	}
	if r.subject == "" {
		r.subject = fmt.Sprintf(texts(d.Locale)["subject"], d.Name, r.asOf)
	}
	if len(r.recipients) == 0 {
		r.recipients = append(append([]string{}, d.To...), d.Cc...)
	}
	r.transport = "outbox"
	if o.SMTP != nil {
		r.transport = o.SMTP.String()
	}
	r.state, r.err = "failed", err.Error()
	id, jerr := j.insert(context.WithoutCancel(ctx), r)
	if jerr == nil {
		jerr = j.finish(context.WithoutCancel(ctx), id, "failed", 0, err)
	}
	res.ID = id
	return res, errors.Join(fmt.Errorf("delivery %s as of %s: %w", d.Name, r.asOf, err), jerr)
}

// messageID is a new Message-ID naming the occurrence, in the sender's domain.
func messageID(name, asOf, from string) string {
	var b [8]byte
	rand.Read(b[:])
	domain := "billsync.invalid"
	if a, err := mail.ParseAddress(from); err == nil {
		if _, dom, ok := strings.Cut(a.Address, "@"); ok && dom != "" {
			domain = dom
		}
	}
	return fmt.Sprintf("billsync.%s.%s.%s@%s", name, asOf, hex.EncodeToString(b[:]), domain)
}

func hashFile(path string) (fileInfo, error) {
	f, err := os.Open(path)
	if err != nil {
		return fileInfo{}, err
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, f)
	if err != nil {
		return fileInfo{}, fmt.Errorf("hash %s: %w", path, err)
	}
	return fileInfo{Path: path, Bytes: n, SHA256: hex.EncodeToString(h.Sum(nil))}, nil
}

// mime makes the message: plain text with an HTML alternative, the files attached when
// attached says so.
func mime(msg message, d *Delivery, from, id string, now time.Time, files []fileInfo) (*gomail.Msg, error) {
	m := gomail.NewMsg(gomail.WithNoDefaultUserAgent())
	if err := m.From(from); err != nil {
		return nil, fmt.Errorf("BILLSYNC_MAIL_FROM %q: %w", from, err)
	}
	if err := m.To(d.To...); err != nil {
		return nil, fmt.Errorf("to: %w", err)
	}
	if len(d.Cc) > 0 {
		if err := m.Cc(d.Cc...); err != nil {
			return nil, fmt.Errorf("cc: %w", err)
		}
	}
	m.Subject(msg.Subject)
	m.SetMessageIDWithValue(id)
	m.SetDateWithValue(now)
	m.SetUserAgent("billsync")
	m.SetGenHeader("Content-Language", d.Locale)
	m.SetBodyString(gomail.TypeTextPlain, msg.Text)
	m.AddAlternativeString(gomail.TypeTextHTML, msg.HTML)
	for _, f := range files {
		if f.Attached {
			m.AttachFile(f.Path)
		}
	}
	return m, nil
}

// writeEML writes the message to path atomically.
func writeEML(m *gomail.Msg, path string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	tmp := path + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return err
	}
	if _, err := m.WriteTo(f); err != nil {
		f.Close()
		os.Remove(tmp)
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		os.Remove(tmp)
		return err
	}
	return os.Rename(tmp, path)
}

// stampLayout is the time in the names of outbox files and of a resend's, again's or test's
// directory: local time (BILLSYNC_TZ) to the microsecond, with the offset, so it reads as the
// clock every other output shows and sorts by time (within one offset: a zone with DST
// sorts by the local clock across the change).
const stampLayout = "20060102T150405.000000-0700"

// stamp is now in loc (UTC when none) as stampLayout.
func stamp(now time.Time, loc *time.Location) string {
	if loc == nil {
		loc = time.UTC
	}
	return now.In(loc).Format(stampLayout)
}

// toOutbox writes the message into the outbox under a name that sorts by time, the time in
// loc with its offset.
func toOutbox(m *gomail.Msg, dir, name, asOf string, loc *time.Location) (string, error) {
	p := filepath.Join(dir, fmt.Sprintf("%s_%s_%s.eml", stamp(time.Now(), loc), name, asOf))
	if err := writeEML(m, p); err != nil {
		return "", fmt.Errorf("outbox: %w", err)
	}
	return p, nil
}

// SendError is a send through an SMTP server that did not end with the server's acceptance.
// Outcome says what is known of the message:
//   - "failed": nobody has it (the connection, the greeting, TLS, AUTH or the envelope failed,
//     or the server answered 4xx): it may be tried again;
//   - "refused": the server answered 5xx (a refused password, an unknown recipient, a message
//     rejected after DATA): it would answer the same, so it is not tried again;
//   - "unknown": the whole message went, up to the final ".", and no answer came (the
//     connection dropped, or the server said nothing until the timeout): the server may have
//     stored it and delivered it.
type SendError struct {
	Outcome string
	// Lacks: the server lacks what the settings asked of it (lacking); its Err says it whole.
	Lacks bool
	Err   error
}

func (e *SendError) Error() string {
	switch e.Outcome {
	case "unknown":
		return "the server took the whole message and gave no answer (it may have been delivered): " + e.Err.Error()
	case "refused":
		if e.Lacks {
			return e.Err.Error()
		}
		return "the server refused it: " + e.Err.Error()
	}
	return e.Err.Error()
}

func (e *SendError) Unwrap() error { return e.Err }

// outcome is what a failed send's error says of the message: failed, refused or unknown (see
// SendError).
func outcome(err error) string {
	var se *SendError
	if errors.As(err, &se) {
		return se.Outcome
	}
	return "failed"
}

// replyCode is the SMTP reply code an error carries, 0 for none (no answer came).
func replyCode(err error) int {
	var te *textproto.Error
	if errors.As(err, &te) {
		return te.Code
	}
	var ge *gomail.SendError
	if errors.As(err, &ge) {
		return ge.ErrorCode()
	}
	return 0
}

// classify makes a failed phase's error a SendError: 5xx refused, else failed.
func classify(err error) *SendError {
	if replyCode(err) >= 500 {
		return &SendError{Outcome: "refused", Err: err}
	}
	return &SendError{Outcome: "failed", Err: err}
}

// send hands the message to the SMTP server, driving the conversation's phases itself so that
// it knows how far the message got: a failure before the final "." left the message with
// nobody; a reply after it is the server's verdict; no reply after it is unknown. Once the
// server accepted the message, a failure to end the session (RSET, QUIT) changes nothing.
func send(ctx context.Context, s *SMTP, m *gomail.Msg) error {
	timeout := s.Timeout
	if timeout <= 0 {
		timeout = time.Minute
	}
	if s.Plain && s.Password != "" && !loopback(s.Host) {
		// ParseSMTP refuses this at start; an SMTP built otherwise must not leak either.
		return &SendError{Outcome: "refused", Lacks: true, Err: fmt.Errorf("smtp server %s: no password goes in plain text to anything but a loopback address (BILLSYNC_SMTP_TLS=none)", s)}
	}
	opts := []gomail.Option{gomail.WithPort(s.Port), gomail.WithTimeout(timeout)}
	switch {
	case s.Plain:
		opts = append(opts, gomail.WithTLSPolicy(gomail.NoTLS))
	case s.Implicit:
		opts = append(opts, gomail.WithSSL())
	default:
		opts = append(opts, gomail.WithTLSPolicy(gomail.TLSMandatory))
	}
	tc := s.TLS
	if tc == nil {
		tc = &tls.Config{ServerName: s.Host, MinVersion: tls.VersionTLS12}
	}
	opts = append(opts, gomail.WithTLSConfig(tc))
	switch {
	case s.User != "" && s.Plain:
		// Without TLS ParseSMTP let a password through to a loopback address only; go-mail's
		// discovery skips PLAIN and LOGIN there, so they are named.
		opts = append(opts, gomail.WithOpportunisticSMTPAuth(gomail.SMTPAuthCramMD5, gomail.SMTPAuthPlainNoEnc,
			gomail.SMTPAuthLoginNoEnc), gomail.WithUsername(s.User), gomail.WithPassword(s.Password))
	case s.User != "":
		opts = append(opts, gomail.WithSMTPAuth(gomail.SMTPAuthAutoDiscover), gomail.WithUsername(s.User),
			gomail.WithPassword(s.Password))
	}
	c, err := gomail.NewClient(s.Host, opts...)
	if err != nil {
		return &SendError{Outcome: "failed", Err: fmt.Errorf("smtp %s: %w", s, err)}
	}
	client, err := c.DialToSMTPClientWithContext(ctx)
	if err != nil {
		// The connection, the greeting, STARTTLS or AUTH: the message has not left.
		if lack := lacking(s, err); lack != nil {
			return lack
		}
		return classify(fmt.Errorf("smtp %s: %w", s, err))
	}
	err = c.SendWithSMTPClient(client, m)
	closeErr := c.CloseWithSMTPClient(client)
	if m.IsDelivered() {
		return nil // accepted (250 after the "."); what failed after is the session's end
	}
	if err == nil {
		err = closeErr
	}
	if err == nil {
		return &SendError{Outcome: "unknown", Err: fmt.Errorf("smtp %s: no acceptance recorded", s)}
	}
	err = fmt.Errorf("smtp %s: %w", s, err)
	var ge *gomail.SendError
	if errors.As(err, &ge) && ge.Reason == gomail.ErrSMTPDataClose && replyCode(err) == 0 {
		// The final "." went (or was being written) and no answer came.
		return &SendError{Outcome: "unknown", Err: err}
	}
	return classify(err)
}

// lacking is a server that lacks what billsync was told to ask of it (STARTTLS, AUTH, TLS
// from the first byte), said in billsync's words with the setting that asked: refused, since
// the same server answers the same until a person changes the server or the setting. nil
// for any other error.
func lacking(s *SMTP, err error) *SendError {
	var rec tls.RecordHeaderError
	msg := err.Error()
	var why string
	switch {
	case s.Implicit && errors.As(err, &rec):
		// go-mail's tls.Dialer met a server that does not speak TLS first.
		why = "does not speak TLS from the first byte (smtps://): it may want STARTTLS (smtp://HOST:587) " +
			"or no TLS (smtp://HOST:25 with BILLSYNC_SMTP_TLS=none, inside the network only)"
	case strings.Contains(msg, "does not support STARTTLS"):
		// go-mail v0.8's words when EHLO offers no STARTTLS under TLSMandatory (no sentinel).
		why = "offers no STARTTLS, and smtp:// requires it: BILLSYNC_SMTP_TLS=none sends without TLS " +
			"(a relay inside the network), smtps:// speaks TLS from the first byte"
	case strings.Contains(msg, "server does not support SMTP AUTH"):
		why = fmt.Sprintf("offers no AUTH (no login), and BILLSYNC_SMTP_URL names user %q: "+
			"a relay that takes mail without a login wants no user (and no BILLSYNC_SMTP_PASSWORD_FILE)", s.User)
	default:
		return nil
	}
	return &SendError{Outcome: "refused", Lacks: true, Err: fmt.Errorf("smtp server %s %s", s, why)}
}
