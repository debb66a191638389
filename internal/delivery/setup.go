package delivery

import (
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/billsync/billsync/internal/config"
)

// Setup checks the delivery settings a command read (internal/config) and loads the schedule
// file: every mistake at once, for the command to stop on at start (exit 2). Without
// BILLSYNC_DELIVERIES the file is nil.
func Setup(files config.Files, rep config.Report, del config.Delivery, log *slog.Logger) (*File, Options, error) {
	var errs []error
	loc, err := time.LoadLocation(rep.TZ)
	if err != nil || rep.TZ == "" || rep.TZ == "Local" {
		errs = append(errs, fmt.Errorf("time zone %q (BILLSYNC_TZ / -tz): want an IANA name such as %s", rep.TZ, config.DefaultTZ))
		loc = nil
	}
	o := Options{DB: files.DB, JobJournal: files.Journal, ReportsOut: rep.ReportsOut, Outbox: del.Outbox, Loc: loc,
		Currency: rep.Currency, From: del.MailFrom, Log: log, Retries: 2, Backoff: 5 * time.Second}
	if err := CheckAddress(del.MailFrom); err != nil {
		errs = append(errs, fmt.Errorf("BILLSYNC_MAIL_FROM: %w", err))
	}
	if _, err := CheckAddresses(del.AlertsTo); err != nil {
		errs = append(errs, fmt.Errorf("BILLSYNC_ALERTS_TO: %w", err))
	}
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
	if del.Deliveries != "" && loc != nil {
		if f, err = Load(del.Deliveries, loc); err != nil {
			errs = append(errs, err)
		}
	}
	return f, o, errors.Join(errs...)
}
