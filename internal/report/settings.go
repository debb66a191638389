package report

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/billsync/billsync/internal/config"
	"github.com/billsync/billsync/internal/jobs/journalfile"
	"github.com/billsync/billsync/internal/report/csvout"
	"github.com/billsync/billsync/internal/report/sheetxml"
)

// Options says which reports to produce, as of when, and where.
type Options struct {
	// Report are the settings (BILLSYNC_TZ, BILLSYNC_LOCALE, ...) as the configuration declares
	// them, so a new setting is a field there read here. An empty one is read as its declared
	// default (withDefaults), as an unset variable is; ReportsOut, the directory written to
	// (created if missing), has none: a caller without one says where.
	config.Report

	DB      string            // published warehouse file
	Journal string            // write-job journal; "" = billsync-jobs.duckdb beside DB
	Formats []string          // "xlsx", "csv"; empty = both
	AsOf    time.Time         // report date (its calendar date counts); zero = today in TZ
	Account string            // only this account; "" = all accounts in the warehouse
	Names   []string          // reports to produce; empty = all
	Vars    map[string]string // report variables (see -list), e.g. aging_basis=created
	// Notice is printed on every summary sheet among the as-of warnings: what the caller knows
	// about the figures that the warehouse cannot say (a delivery's staleness).
	Notice string
	Log    *slog.Logger
}

// sheetRowsMode is how the workbooks' body rows are written: sheetxml.Spliced; a test renders
// every workbook with sheetxml.Stream too and wants the same sheets (TestWorkbooksSplicedAsStream).
var sheetRowsMode = sheetxml.Spliced

// settings are Options resolved and checked.
type settings struct {
	Options
	loc     *time.Location
	asOf    string      // YYYY-MM-DD
	journal journalNote // what the summary sheet says about the journal
	hasJnl  bool
	mem     *nativeMemory
	digests bool // GenerateDigests: each report's Digest is made
	lang    *lang
	dialect *csvout.Dialect
	zone    *fixedZone // where local_time() may skip ICU; nil: nowhere
	// rowsMode is how the workbooks' body rows are written (sheetRowsMode)
	rowsMode sheetxml.Mode
	// warnings about the as-of date (asOfWarnings), logged and on every summary sheet
	warnings []asOfWarning
	// the names several customers or products carry, read once for every report that prints
	// names (loadSameNames)
	sameOnce sync.Once
	same     *sameNames
	sameErr  error
}

// sameNames reads the names several customers or products carry, once per run, on the
// connection of the first report that needs them (the account is every report's).
func (s *settings) sameNames(ctx context.Context, conn *sql.Conn) (*sameNames, error) {
	s.sameOnce.Do(func() { s.same, s.sameErr = loadSameNames(ctx, conn) })
	return s.same, s.sameErr
}

func (o Options) resolve() (*settings, error) {
	s := &settings{Options: o, rowsMode: sheetRowsMode}
	s.Report = withDefaults(s.Report)
	s.loc = s.TZ.Location() // loaded when the setting was read (config.Zone)
	var err error
	if s.lang, err = langOf(s.Locale); err != nil {
		return nil, err
	}
	s.Locale = s.lang.code
	if s.dialect, err = csvout.DialectOf(s.CSVDialect); err != nil {
		return nil, err
	}
	s.Currency = strings.ToUpper(s.Currency)
	if s.AsOf.IsZero() {
		s.AsOf = time.Now().In(s.loc)
	}
	s.asOf = s.AsOf.Format(time.DateOnly)
	if len(s.Formats) == 0 {
		s.Formats = []string{"xlsx", "csv"}
	}
	for _, f := range s.Formats {
		if f != "xlsx" && f != "csv" {
			return nil, fmt.Errorf("format %q: want xlsx or csv", f)
		}
	}
	if s.ReportsOut == "" {
		return nil, errors.New("no output directory")
	}
	if s.Journal == "" && s.DB != "" {
		s.Journal = journalfile.DefaultPath(s.DB)
	}
	if s.Log == nil {
		s.Log = slog.Default()
	}
	return s, nil
}

// CheckSettings says which of r's settings no report can be made with (the kinds config.Check
// leaves to this package: the locale and the CSV dialect), each error naming its variable and
// flag. An empty one is its declared default.
func CheckSettings(r config.Report) error {
	var errs []error
	if r.Locale != "" {
		if _, err := langOf(r.Locale); err != nil {
			errs = append(errs, config.Problem(&r, "BILLSYNC_LOCALE", fmt.Errorf("want %s", strings.Join(locales, " or "))))
		}
	}
	if r.CSVDialect != "" {
		if _, err := csvout.DialectOf(r.CSVDialect); err != nil {
			errs = append(errs, config.Problem(&r, "BILLSYNC_CSV_DIALECT", fmt.Errorf("want %s", strings.Join(csvout.Dialects, " or "))))
		}
	}
	return errors.Join(errs...)
}

// proveZone sets s.zone: the interval around the as-of date in which the time zone's offset is
// proven constant (proveFixedZone).
func (s *settings) proveZone(ctx context.Context, db *sql.DB) error {
	day, err := time.ParseInLocation(time.DateOnly, s.asOf, s.loc)
	if err != nil {
		return err
	}
	if s.zone, err = proveFixedZone(ctx, db, s.TZ.String(), s.loc, day); err != nil {
		return err
	}
	if s.zone == nil {
		s.Log.Debug("time zone offsets not proven constant: dates converted by ICU", "tz", s.TZ.String())
	} else {
		s.Log.Debug("time zone offset proven constant", "tz", s.TZ.String(), "from", s.zone.from, "until", s.zone.until, "offset", s.zone.offset)
	}
	return nil
}

// setReportVars sets as_of, tz, account and the report's variables on conn
// and returns the values titles may use.
func setReportVars(ctx context.Context, conn *sql.Conn, s *settings, d *Definition) (map[string]string, error) {
	vals := map[string]string{"as_of": s.asOf, "tz": s.TZ.String(), "currency": s.Currency}
	set := func(name, typ, v string) error {
		if err := setVar(ctx, conn, name, typ, v); err != nil {
			return fmt.Errorf("variable %w", err)
		}
		vals[name] = v
		return nil
	}
	if err := set("as_of", "DATE", s.asOf); err != nil {
		return nil, err
	}
	if err := set("tz", "VARCHAR", s.TZ.String()); err != nil {
		return nil, err
	}
	if s.Account != "" {
		if err := set("account", "VARCHAR", s.Account); err != nil {
			return nil, err
		}
	}
	if s.zone != nil && s.zone.zone == s.TZ.String() {
		if err := s.zone.setVars(ctx, conn); err != nil {
			return nil, fmt.Errorf("variable %w", err)
		}
	}
	for _, v := range d.Vars {
		val, ok := s.Vars[v.Name]
		if !ok {
			val = v.Default
		}
		if val == "" {
			continue // the query file's default applies
		}
		if err := set(v.Name, v.Type, val); err != nil {
			return nil, err
		}
	}
	return vals, nil
}
