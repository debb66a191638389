package delivery

import (
	"errors"
	"log/slog"
	"time"

	"github.com/billsync/billsync/internal/config"
)

// Setup checks the delivery settings a command read (internal/config) and loads the schedule
// file: every mistake at once, for the command to stop on at start (exit 2). Without
// BILLSYNC_DELIVERIES the file is nil.
func Setup(files config.Files, rep config.Report, del config.Delivery, log *slog.Logger) (*File, Options, error) {
	var errs []error
	loc, err := config.LoadZone(rep.TZ)
	if err != nil {
		errs = append(errs, config.Problem(&rep, "BILLSYNC_TZ", err))
	}
	o := Options{DB: files.DB, JobJournal: files.Journal, ReportsOut: rep.ReportsOut, Outbox: del.Outbox, Loc: loc,
		Currency: rep.Currency, From: del.MailFrom, Log: log, Retries: 2, Backoff: 5 * time.Second}
	if o.SMTP, err = ParseSMTP(del.SMTPURL, del.SMTPPasswordFile); err != nil {
		errs = append(errs, err)
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
