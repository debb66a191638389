package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"

	"github.com/billsync/billsync/internal/cli"
	conf "github.com/billsync/billsync/internal/config"
	"github.com/billsync/billsync/internal/delivery"
	"github.com/billsync/billsync/internal/logfmt"
	"github.com/billsync/billsync/internal/report"
	"github.com/sethvargo/go-envconfig"
)

// deliverConfig is report deliver's and report deliveries' settings.
type deliverConfig struct {
	conf.Files
	conf.Report
	conf.Delivery
}

// deliverFlags are report deliver's and report deliveries' own flags.
type deliverFlags struct {
	asOf, testTo  string
	dryRun, again bool
	limit         int
}

// flagSet is report deliver's (sub "deliver") or report deliveries' flag set over c and f.
func (f *deliverFlags) flagSet(sub string, c *deliverConfig) *flag.FlagSet {
	fs := flag.NewFlagSet("report "+sub, flag.ContinueOnError)
	fs.Usage = func() {
		w := fs.Output()
		fmt.Fprintln(w, "usage: report deliver NAME [-as-of DATE] [-dry-run] [-again]   send one delivery of BILLSYNC_DELIVERIES now")
		fmt.Fprintln(w, "       report deliver NAME [-as-of DATE] -test-to ADDR          send it to ADDR only, marked as a test; consumes nothing")
		fmt.Fprintln(w, "       report deliveries [NAME] [-n 20]                        the delivery journal, newest first")
		fmt.Fprintln(w, "\nWithout BILLSYNC_SMTP_URL messages go to the outbox (BILLSYNC_OUTBOX) as .eml files.")
		fmt.Fprintln(w, "The outbox is a rehearsal: once BILLSYNC_SMTP_URL is set, an occurrence written there goes to its recipients.")
		fmt.Fprintln(w, "Exit 0: sent, written to the outbox or already; 1: failed, refused or unknown; 2: usage or settings.")
		fmt.Fprintln(w, "See docs/delivery.md.\n\nflags:")
		fs.PrintDefaults()
	}
	if sub == "deliver" {
		// report's settings (a delivery's own locale, csv_dialect and vars override them), and how
		// messages leave; alerts are the daemon's.
		conf.Bind(fs, c, "db", "journal", "tz", "currency", "locale", "csv-dialect", "reports-out", "deliveries", "smtp-url", "smtp-tls",
			"smtp-password-file", "mail-from", "outbox")
		fs.StringVar(&f.asOf, "as-of", "", "the occurrence's as-of date YYYY-MM-DD (default: the delivery's as_of rule, today)")
		fs.BoolVar(&f.dryRun, "dry-run", false, "write the message as an .eml into the outbox; send and journal nothing")
		fs.BoolVar(&f.again, "again", false, "send it even if the journal has it sent (journaled as again)")
		fs.StringVar(&f.testTo, "test-to", "", "send the occurrence to these addresses only (comma-separated), [UJI]/[TEST] in the subject; journaled as a test, it consumes nothing")
	} else {
		conf.Bind(fs, c, "db", "tz")
		fs.IntVar(&f.limit, "n", 20, "rows to show")
	}
	return fs
}

// deliverCommand is "report deliver NAME" (one occurrence now) and "report deliveries" (the
// journal). Exit 0: sent, written to the outbox, or already; 1: failed, refused or unknown; 2: a
// usage or settings mistake.
func deliverCommand(ctx context.Context, sub string, args []string, lookup envconfig.Lookuper, stdout, stderr io.Writer) error {
	var c deliverConfig
	if _, err := conf.Load(ctx, &c, lookup); err != nil {
		return cli.Config(err)
	}
	var f deliverFlags
	fs := f.flagSet(sub, &c)
	// Flags may follow the name too (report deliver daily -dry-run), as the usage shows them.
	var names []string
	for {
		if err := cli.Parse(fs, args); err != nil {
			return err
		}
		if fs.NArg() == 0 {
			break
		}
		names = append(names, fs.Arg(0))
		args = fs.Args()[1:]
	}
	asOf, dryRun, again, limit := f.asOf, f.dryRun, f.again, f.limit
	var testTo []string
	if err := errors.Join(conf.Check(&c), report.CheckSettings(c.Report)); err != nil {
		return cli.Usage(fs, err)
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{ReplaceAttr: logfmt.In(c.TZ.Location())}))
	// The schedule file and how messages leave, checked for both subcommands: one environment.
	file, o, err := delivery.Setup(c.Files, c.Report, c.Delivery, log)
	if err != nil {
		return cli.Usage(fs, err)
	}
	if sub == "deliveries" {
		if len(names) > 1 {
			return cli.Usagef(fs, "want at most one delivery name, got %s", strings.Join(names, " "))
		}
		name := ""
		if len(names) == 1 {
			name = names[0]
		}
		return listDeliveries(ctx, c, name, limit, c.TZ.Location(), stdout)
	}
	if len(names) != 1 {
		return cli.Usagef(fs, "want one delivery name, got %d", len(names))
	}
	var errs []error
	if c.Deliveries == "" {
		errs = append(errs, errors.New("BILLSYNC_DELIVERIES (-deliveries) is not set: name the schedule file"))
	}
	var date time.Time
	if asOf != "" {
		if date, err = time.Parse(time.DateOnly, asOf); err != nil {
			errs = append(errs, fmt.Errorf("-as-of %q: want YYYY-MM-DD", asOf))
		}
	}
	if dryRun && again {
		errs = append(errs, errors.New("-dry-run sends nothing: -again goes without it"))
	}
	if f.testTo != "" {
		if testTo, err = conf.CheckAddresses(f.testTo); err != nil {
			errs = append(errs, fmt.Errorf("-test-to: %w", err))
		}
		if dryRun || again {
			errs = append(errs, errors.New("-test-to sends a test whatever the journal says: -dry-run and -again go without it"))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return cli.Usage(fs, err)
	}
	d, err := file.Find(names[0])
	if err != nil {
		return cli.Usage(fs, err)
	}
	if date.IsZero() {
		if date, err = delivery.AsOfDate(d.AsOf, time.Now(), o.Report.TZ.Location()); err != nil {
			return cli.Usage(fs, err)
		}
	}
	res, err := delivery.Deliver(ctx, o, delivery.Occurrence{Delivery: d, AsOf: date, Again: again, DryRun: dryRun, TestTo: testTo})
	day := date.Format(time.DateOnly)
	if len(testTo) > 0 && (res.State == "sent" || res.State == "outbox") {
		where := "sent via " + o.SMTP.String()
		if res.State == "outbox" {
			where = "written to the outbox: " + res.EML
		}
		fmt.Fprintf(stdout, "%s as of %s: a test to %s only, %s\n  subject: %s\n  journaled as a test: the occurrence is still owed to %s\n",
			d.Name, day, strings.Join(testTo, ", "), where, res.Subject, strings.Join(append(append([]string{}, d.To...), d.Cc...), ", "))
		res.State = "test"
	}
	switch res.State {
	case "already":
		fmt.Fprintf(stdout, "%s as of %s: already sent (report deliveries %s; -again sends it once more)\n", d.Name, day, d.Name)
	case "already-outbox":
		fmt.Fprintf(stdout, "%s as of %s: already in the outbox, nobody was sent it: with BILLSYNC_SMTP_URL set, report deliver %s -as-of %s sends it to the recipients\n",
			d.Name, day, d.Name, day)
	case "dry-run":
		fmt.Fprintf(stdout, "%s as of %s: written, not sent: %s\n", d.Name, day, res.EML)
	case "outbox":
		fmt.Fprintf(stdout, "%s as of %s: written to the outbox, not sent (a rehearsal): %s\n  with BILLSYNC_SMTP_URL set, report deliver %s -as-of %s sends it to %s\n  subject: %s\n",
			d.Name, day, res.EML, d.Name, day, strings.Join(append(append([]string{}, d.To...), d.Cc...), ", "), res.Subject)
	case "sent":
		fmt.Fprintf(stdout, "%s as of %s: sent to %s via %s\n  subject: %s\n  message-id: <%s>\n", d.Name, day,
			strings.Join(append(append([]string{}, d.To...), d.Cc...), ", "), o.SMTP, res.Subject, res.MessageID)
	case "unknown":
		fmt.Fprintf(stdout, "%s as of %s: unknown: the server took the whole message and gave no answer; the recipients may have it\n"+
			"  message-id: <%s>; report deliver %s -as-of %s sends it once more, marked as resent, with the same Message-ID\n",
			d.Name, day, res.MessageID, d.Name, day)
	case "refused":
		fmt.Fprintf(stdout, "%s as of %s: refused by the server (not tried again: it would answer the same)\n", d.Name, day)
	}
	if res.Stale != "" && !strings.HasPrefix(res.State, "already") {
		fmt.Fprintf(stdout, "  stale: %s\n", res.Stale)
	}
	for _, f := range res.Files {
		att := "attached"
		if !f.Attached {
			att = "not attached (over max_attach_mb)"
		}
		fmt.Fprintf(stdout, "  %s  %d bytes  sha256 %s  %s\n", f.Path, f.Bytes, f.SHA256[:16], att)
	}
	return err
}

// listDeliveries prints the journal, each time in loc (BILLSYNC_TZ) with its zone named, as
// the schedule and the messages say them.
func listDeliveries(ctx context.Context, c deliverConfig, name string, limit int, loc *time.Location, w io.Writer) error {
	path := delivery.JournalPath(c.DB)
	es, err := delivery.List(ctx, path, name, limit)
	if err != nil {
		return err
	}
	if len(es) == 0 {
		fmt.Fprintf(w, "no deliveries in %s\n", path)
		return nil
	}
	fmt.Fprintf(w, "%-4s %-12s %-10s %-9s %-7s %-8s %-20s %s\n", "id", "delivery", "as_of", "kind", "state", "attempts", "started", "subject")
	for _, e := range es {
		fmt.Fprintf(w, "%-4d %-12s %-10s %-9s %-7s %-8d %-20s %s\n", e.ID, e.Name, e.AsOf, e.Kind, e.State, e.Attempts,
			e.Started.In(loc).Format("2006-01-02 15:04 MST"), e.Subject)
		fmt.Fprintf(w, "     to %s via %s, %d files (%d bytes)", e.Recipients, e.Transport, e.Files, e.Bytes)
		if e.MessageID != "" {
			fmt.Fprintf(w, ", <%s>", e.MessageID)
		}
		fmt.Fprintln(w)
		if e.Late {
			fmt.Fprintln(w, "     late")
		}
		if e.Stale != "" {
			fmt.Fprintf(w, "     stale: %s\n", e.Stale)
		}
		if e.Error != "" {
			fmt.Fprintf(w, "     error: %s\n", e.Error)
		}
		for _, f := range e.FileList {
			fmt.Fprintf(w, "     %s  sha256 %s\n", f.Path, f.SHA256)
		}
	}
	return nil
}
