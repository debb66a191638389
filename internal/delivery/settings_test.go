package delivery

import (
	"archive/zip"
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/billsync/billsync/internal/config"
	"github.com/billsync/billsync/internal/report"
	"github.com/sethvargo/go-envconfig"
)

// otherThanDefault is a value of each kind of report setting that is not its declared default:
// by its check kind, or, for a setting without one (a number, a duration, a switch), by its Go
// kind (otherValue), so a new setting needs no line here (docs/architecture.md).
var otherThanDefault = map[string]string{"zone": "Asia/Makassar", "currency": "USD", "locale": "en", "dialect": "id"}

// otherValue is a value of o other than its declared default: by its check kind, else by its Go
// kind. A text without a check (a path, a name) has none: no value says what it would change.
func otherValue(o config.Option) (string, bool) {
	if o.Check != "" {
		v, ok := otherThanDefault[o.Check]
		return v, ok
	}
	switch o.Kind() {
	case "bool":
		if o.Default == "true" {
			return "false", true
		}
		return "true", true
	case "int", "int64":
		if o.Default == "3" {
			return "4", true
		}
		return "3", true
	case "float64":
		if o.Default == "2.5" {
			return "3.5", true
		}
		return "2.5", true
	case "duration":
		if o.Default == "90m" {
			return "45m", true
		}
		return "90m", true
	}
	return "", false
}

// notInFiles are the report settings no report's file depends on, and why: a delivery passes them
// on with the rest (its settings are report's, whole), but there is nothing to compare.
var notInFiles = map[string]string{
	"BILLSYNC_REPORTS_OUT": "where the files go: a delivery's go under it, in deliveries/NAME/AS-OF (checked below)",
	"BILLSYNC_SQL_FILES":   "the folders report -sql may read and write; a report reads only the warehouse",
}

// TestDeliveryRendersAsReport walks every report setting (config.Report, by reflection: a new
// setting is covered without being listed) and renders, with a value other than its default, what
// report writes and what a delivery (naming no locale or dialect of its own) attaches, from the
// same warehouse as of the same day: the files must be the same, and differ from the defaults'
// (else the setting proved nothing). A delivery rebuilt the report settings from three fields,
// so its CSVs ignored BILLSYNC_CSV_DIALECT and a delivery without locale: BILLSYNC_LOCALE.
func TestDeliveryRendersAsReport(t *testing.T) {
	db := testWarehouse(t)
	asOf := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	d := testDelivery(t, strings.Replace(daily, "    to:", "    format: both\n    vars: {bucket_1: \"20\"}\n    to:", 1))
	base := renderReport(t, db, config.Report{}, d, asOf)
	walked := 0
	for _, o := range config.Options(&config.Report{}) {
		if _, ok := notInFiles[o.Env]; ok {
			continue
		}
		v, ok := otherValue(o)
		if !ok {
			t.Errorf("%s: no value other than its default for check kind %q (Go kind %s) in otherValue, nor a reason in notInFiles", o.Env, o.Check, o.Kind())
			continue
		}
		walked++
		t.Run(o.Env, func(t *testing.T) {
			var rep config.Report
			if _, err := config.Load(context.Background(), &rep, envconfig.MapLookuper(map[string]string{o.Env: v})); err != nil {
				t.Fatal(err)
			}
			want := renderReport(t, db, rep, d, asOf)
			if sameFiles(base, want) {
				t.Fatalf("%s=%s changes nothing report writes: pick another value", o.Env, v)
			}
			got, eml := renderDelivery(t, db, rep, d, asOf)
			if !sameFiles(got, want) {
				// the summary says when it was generated, to the minute: the minute may have turned
				// between the two renders, not again before a third
				want = renderReport(t, db, rep, d, asOf)
			}
			compareFiles(t, got, want)
			if o.Env == "BILLSYNC_LOCALE" && !strings.Contains(eml, "Content-Language: "+v) {
				t.Errorf("the message is not in BILLSYNC_LOCALE=%s:\n%.600s", v, eml)
			}
		})
	}
	if walked < 4 {
		t.Errorf("only %d report settings walked", walked)
	}

	// The delivery's own locale and csv_dialect override the settings', as report's flags would.
	t.Run("overrides", func(t *testing.T) {
		own := testDelivery(t, strings.Replace(daily, "    to:", "    format: both\n    vars: {bucket_1: \"20\"}\n    locale: id\n    csv_dialect: rfc\n    to:", 1))
		rep := config.Report{Locale: "en", CSVDialect: "id", Currency: "USD"}
		want := renderReport(t, db, config.Report{Locale: "id", CSVDialect: "rfc", Currency: "USD"}, own, asOf)
		got, eml := renderDelivery(t, db, rep, own, asOf)
		if !sameFiles(got, want) {
			want = renderReport(t, db, config.Report{Locale: "id", CSVDialect: "rfc", Currency: "USD"}, own, asOf) // the minute turned
		}
		compareFiles(t, got, want)
		if !strings.Contains(eml, "Content-Language: id") {
			t.Errorf("the delivery's locale: id did not win:\n%.600s", eml)
		}
	})
}

// TestOtherValueByGoKind: a report setting without a check tag (a number, a duration, a switch)
// gets a value from otherValue that loads and is not its declared default. otherThanDefault was
// keyed by check kind only, so a new number setting failed TestDeliveryRendersAsReport asking
// for a hand entry, though docs/architecture.md says a setting needs no line but its docs row.
func TestOtherValueByGoKind(t *testing.T) {
	type settings struct {
		Int      int           `env:"T_INT, default=20"`
		Three    int           `env:"T_THREE, default=3" zero:"off"`
		Int64    int64         `env:"T_INT64" zero:"none"`
		Float    float64       `env:"T_FLOAT, default=0.5"`
		Duration time.Duration `env:"T_DURATION, default=26h"`
		On       bool          `env:"T_ON, default=true"`
		Off      bool          `env:"T_OFF"`
	}
	for _, o := range config.Options(&settings{}) {
		v, ok := otherValue(o)
		if !ok {
			t.Errorf("%s (Go kind %s): no value other than its default", o.Env, o.Kind())
			continue
		}
		var def, set settings
		if _, err := config.Load(context.Background(), &def, envconfig.MapLookuper(nil)); err != nil {
			t.Fatal(err)
		}
		if _, err := config.Load(context.Background(), &set, envconfig.MapLookuper(map[string]string{o.Env: v})); err != nil {
			t.Errorf("%s=%s: %v", o.Env, v, err)
			continue
		}
		if def == set {
			t.Errorf("%s=%s: the same as its default %q", o.Env, v, o.Default)
		}
	}
}

// renderReport is what report writes with settings rep (the delivery's reports, format and vars).
func renderReport(t *testing.T, db string, rep config.Report, d *Delivery, asOf time.Time) map[string][]byte {
	t.Helper()
	rep.ReportsOut = t.TempDir()
	paths, err := report.Generate(context.Background(), report.Options{Report: rep, DB: db, AsOf: asOf, Names: d.Reports,
		Vars: d.Vars, Account: d.Account, Formats: []string{"xlsx", "csv"}, Log: quiet})
	if err != nil {
		t.Fatal(err)
	}
	return readFiles(t, paths)
}

// renderDelivery is what a dry run of d attaches, with report's settings rep, and its message.
func renderDelivery(t *testing.T, db string, rep config.Report, d *Delivery, asOf time.Time) (map[string][]byte, string) {
	t.Helper()
	o := testOptions(t, db)
	rep.ReportsOut = o.Report.ReportsOut
	o.Report = rep
	res, err := Deliver(context.Background(), o, Occurrence{Delivery: d, AsOf: asOf, DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, f := range res.Files {
		if !strings.HasPrefix(f.Path, filepath.Join(rep.ReportsOut, "deliveries", d.Name)+string(filepath.Separator)) {
			t.Errorf("%s: not under BILLSYNC_REPORTS_OUT/deliveries/%s", f.Path, d.Name)
		}
		paths = append(paths, f.Path)
	}
	if res.Stale != "" {
		t.Fatalf("the occurrence is stale (%s): its notice would differ from report's files", res.Stale)
	}
	return readFiles(t, paths), readFile(t, res.EML)
}

// readFiles reads each file by its name; a workbook as its parts but the document properties
// (the time it was written) and the content types (excelize lists them in map order).
func readFiles(t *testing.T, paths []string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasSuffix(p, ".xlsx") {
			out[filepath.Base(p)] = b
			continue
		}
		z, err := zip.NewReader(bytes.NewReader(b), int64(len(b)))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range z.File {
			if strings.HasPrefix(f.Name, "docProps/") || f.Name == "[Content_Types].xml" {
				continue
			}
			r, err := f.Open()
			if err != nil {
				t.Fatal(err)
			}
			part, err := io.ReadAll(r)
			r.Close()
			if err != nil {
				t.Fatal(err)
			}
			out[filepath.Base(p)+"/"+f.Name] = part
		}
	}
	return out
}

func sameFiles(a, b map[string][]byte) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if !bytes.Equal(v, b[k]) {
			return false
		}
	}
	return true
}

func compareFiles(t *testing.T, got, want map[string][]byte) {
	t.Helper()
	if len(want) == 0 {
		t.Fatal("report wrote nothing")
	}
	for name, w := range want {
		g, ok := got[name]
		switch {
		case !ok:
			t.Errorf("%s: report writes it, the delivery does not (it has %d files and parts)", name, len(got))
		case !bytes.Equal(g, w):
			t.Errorf("%s: the delivery's differs from report's (%d and %d bytes):\n%.300s\nreport's:\n%.300s", name, len(g), len(w), g, w)
		}
	}
	for name := range got {
		if _, ok := want[name]; !ok {
			t.Errorf("%s: the delivery attaches it, report does not write it", name)
		}
	}
}
