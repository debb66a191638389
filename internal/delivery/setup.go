package delivery

import (
	"errors"
	"log/slog"
	"time"

	"github.com/billsync/billsync/internal/config"
)

// Setup takes the settings a command read and checked (internal/config: config.Check, and
// report.CheckSettings for the report's), checks what only deliveries know of them (the SMTP
// server, somewhere for messages to go) and loads the schedule file, its deliveries following
// report's settings (rep, whole) where they say nothing of their own: every mistake at once, for
// the command to stop on at start (exit 2). Without BILLSYNC_DELIVERIES the file is nil.
func Setup(files config.Files, rep config.Report, del config.Delivery, log *slog.Logger) (*File, Options, error) {
	var errs []error
	rep = config.WithDefaults(rep)
	o := Options{Report: rep, DB: files.DB, JobJournal: files.Journal, Outbox: del.Outbox, From: del.MailFrom, Log: log,
		Retries: 2, Backoff: 5 * time.Second}
	var err error
	if o.SMTP, err = ParseSMTP(del.SMTPURL, del.SMTPPasswordFile, del.SMTPTLS); err != nil {
		errs = append(errs, err)
	} else if o.SMTP != nil && o.SMTP.Plain && log != nil {
		// Loud on purpose: every message, attachments and all, crosses the network readable.
		log.Warn("BILLSYNC_SMTP_TLS=none: messages go to the SMTP server WITHOUT TLS, readable by anyone on the network between; "+
			"only for a relay inside the network", "smtp", o.SMTP.String())
	}
	if del.Outbox == "" && o.SMTP == nil {
		errs = append(errs, errors.New("BILLSYNC_OUTBOX is empty and BILLSYNC_SMTP_URL unset: messages have nowhere to go"))
	}
	var f *File
	if del.Deliveries != "" {
		if f, err = Load(del.Deliveries, rep.TZ.Location()); err != nil {
			errs = append(errs, err)
		} else {
			f.Inherit(rep)
		}
	}
	return f, o, errors.Join(errs...)
}
