package delivery

import (
	"bytes"
	"context"
	"embed"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
	"time"

	"github.com/billsync/billsync/internal/duckfile"
	"github.com/billsync/billsync/internal/jobs/journalfile"
	"github.com/billsync/billsync/internal/report"
	"github.com/billsync/billsync/internal/report/csvout"
	"github.com/billsync/billsync/internal/sqlfile"
)

//go:embed checks.sql
var checksFS embed.FS

var checkStmts = sqlfile.MustLoad(checksFS, "checks.sql", "unresolved_rows")

// unresolvedJobs counts the job journal's rows waiting for a person (newest state
// unresolved), per plan, reading the journal at path read-only. A journal not yet written has
// none.
func unresolvedJobs(ctx context.Context, path string) (int, []string, error) {
	db, err := duckfile.Open("", duckfile.Options{})
	if err != nil {
		return 0, nil, err
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	if err := journalfile.Attach(ctx, db, path); errors.Is(err, fs.ErrNotExist) {
		return 0, nil, nil
	} else if err != nil {
		return 0, nil, fmt.Errorf("job journal %s: %w", path, err)
	}
	// attached read-only, and no statement re-attaches it or reaches a file
	if err := duckfile.Confine(ctx, db, duckfile.Confinement{}); err != nil {
		return 0, nil, fmt.Errorf("job journal %s: %w", path, err)
	}
	rows, err := db.QueryContext(ctx, checkStmts.Get("unresolved_rows"))
	if err != nil {
		return 0, nil, fmt.Errorf("job journal %s: %w", path, err)
	}
	defer rows.Close()
	total := 0
	var plans []string
	for rows.Next() {
		var plan string
		var n int
		if err := rows.Scan(&plan, &n); err != nil {
			return 0, nil, err
		}
		total += n
		plans = append(plans, fmt.Sprintf("plan %s: %d", plan, n))
	}
	return total, plans, rows.Err()
}

// dqSheets are the data-quality report's sheets whose rows are exceptions, by the suffix of
// their CSV file: customers' e-mails to fix, and records the service sent twice with
// different contents. Deleted records and the sync health are the business's course, not
// exceptions.
var dqSheets = []struct{ suffix, label string }{
	{"_e-mail-fixes.csv", "e-mail fixes"},
	{"_conflicting-duplicates.csv", "conflicting duplicates"},
}

// dqExceptions runs the data-quality report as of asOf (its CSV files, in a directory removed
// after) and counts the rows of its exception sheets: the same rows the report e-mailed to
// finance lists.
func dqExceptions(ctx context.Context, o Options, asOf time.Time) (int, string, error) {
	dir, err := os.MkdirTemp("", "billsync-dq-")
	if err != nil {
		return 0, "", err
	}
	defer os.RemoveAll(dir)
	// report's settings, but read by code here: English sheet names and the CSV programs read
	settings := o.Report
	settings.ReportsOut, settings.Locale, settings.CSVDialect = dir, "en", csvout.RFC.Name()
	paths, err := report.Generate(ctx, report.Options{
		Report: settings, DB: o.DB, Journal: o.JobJournal, Formats: []string{"csv"}, AsOf: asOf,
		Names: []string{"data-quality"}, Log: o.Log})
	if err != nil {
		return 0, "", fmt.Errorf("data-quality report: %w", err)
	}
	total := 0
	var parts []string
	for _, s := range dqSheets {
		var path string
		for _, p := range paths {
			if strings.HasSuffix(p, s.suffix) {
				path = p
			}
		}
		if path == "" {
			return 0, "", fmt.Errorf("data-quality report: no file *%s among %v", s.suffix, paths)
		}
		n, err := csvRows(path)
		if err != nil {
			return 0, "", err
		}
		total += n
		parts = append(parts, fmt.Sprintf("%s %d", s.label, n))
	}
	return total, strings.Join(parts, ", "), nil
}

// csvRows counts a report CSV's rows below its header.
func csvRows(path string) (int, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	r := csv.NewReader(bytes.NewReader(bytes.TrimPrefix(b, []byte("\ufeff"))))
	r.FieldsPerRecord = -1
	n := -1
	for {
		if _, err := r.Read(); err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			return 0, fmt.Errorf("%s: %w", path, err)
		}
		n++
	}
	return max(n, 0), nil
}
