package report

import (
	"testing"
	"time"

	"github.com/billsync/billsync/internal/config"
	"github.com/billsync/billsync/internal/report/csvout"
)

// TestZeroSettingsAreDeclaredDefaults: Options left empty (a test's, a library caller's) are
// resolved to the defaults config.Report declares, as unset variables are, and a set one is
// kept; the output directory alone has no default.
func TestZeroSettingsAreDeclaredDefaults(t *testing.T) {
	want := config.Defaults[config.Report]()
	s, err := Options{Report: config.Report{ReportsOut: t.TempDir()}}.resolve()
	if err != nil {
		t.Fatal(err)
	}
	if s.TZ != want.TZ || s.Currency != want.Currency || s.Locale != want.Locale || s.CSVDialect != want.CSVDialect {
		t.Errorf("zero settings resolved to %+v, want the declared %+v", s.Report, want)
	}
	if s.loc != want.TZ.Location() || s.lang != langs[want.Locale] || s.dialect != csvout.RFC {
		t.Errorf("zero settings: zone %s, locale %s, dialect %v", s.loc, s.lang.code, s.dialect)
	}
	set := config.Report{ReportsOut: t.TempDir(), TZ: config.MustZone("UTC"), Currency: "usd", Locale: "en", CSVDialect: "id"}
	if s, err = (Options{Report: set}).resolve(); err != nil {
		t.Fatal(err)
	}
	if s.TZ.String() != "UTC" || s.loc != time.UTC || s.Currency != "USD" || s.Locale != "en" || s.CSVDialect != "id" || s.dialect != csvout.ID {
		t.Errorf("set settings resolved to %+v", s.Report)
	}
	if _, err := (Options{}).resolve(); err == nil || err.Error() != "no output directory" {
		t.Errorf("no output directory: %v", err)
	}
	for _, c := range []struct {
		name string
		err  error
	}{{"CheckLocale", CheckLocale("")}, {"CheckCSVDialect", CheckCSVDialect("")}} {
		if c.err != nil {
			t.Errorf("%s(\"\"): %v, want the default", c.name, c.err)
		}
	}
}
