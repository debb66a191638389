package report

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/billsync/billsync/internal/config"
	"github.com/xuri/excelize/v2"
)

// TestCheckVars: values a report cannot use are refused before anything runs, each named.
func TestCheckVars(t *testing.T) {
	for _, tc := range []struct {
		name  string
		names []string
		vars  map[string]string
		adhoc bool
		want  []string // substrings; none = accepted
	}{
		{"defaults", nil, nil, false, nil},
		{"ordered buckets", []string{"aging"}, map[string]string{"bucket_1": "15", "bucket_2": "45"}, false, nil},
		{"bucket above the next", []string{"aging"}, map[string]string{"bucket_1": "100"}, false,
			[]string{"bucket_2=60 must be above bucket_1=100"}},
		{"equal buckets", []string{"aging"}, map[string]string{"bucket_2": "90"}, false, []string{"bucket_3=90 must be above bucket_2=90"}},
		{"negative bucket", []string{"aging"}, map[string]string{"bucket_1": "-5"}, false, []string{"bucket_1=-5 (-var): must be at least 1"}},
		{"not a number", []string{"aging"}, map[string]string{"payment_terms_days": "two"}, false, []string{"want a whole number"}},
		{"zero months and runs, both shown", []string{"collections", "data-quality"}, map[string]string{"months": "0", "runs": "-1"}, false,
			[]string{"months=0 (-var): must be at least 1", "runs=-1 (-var): must be at least 1"}},
		{"rating above five", []string{"reviews"}, map[string]string{"low_rating_max": "6"}, false, []string{"must be at most 5"}},
		{"bad date", []string{"credit"}, map[string]string{"period_start": "2026-13-01"}, false, []string{"want a date"}},
		{"as_of is a flag", []string{"aging"}, map[string]string{"as_of": "2026-10-31"}, false, []string{"use -as-of"}},
		{"ad-hoc: own variables pass", nil, map[string]string{"mine": "x"}, true, nil},
		{"ad-hoc: declared ones checked", nil, map[string]string{"bucket_1": "100"}, true, []string{"bucket_2=60 must be above bucket_1=100"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckVars(tc.names, tc.vars, tc.adhoc)
			if len(tc.want) == 0 {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("accepted, want an error with %q", tc.want)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
}

// TestAsOfOutsideHistoryWarned: an as-of date the warehouse cannot answer (before the first
// sync, or after today) is warned about on stderr's log and on the summary sheet; a date the
// history covers is not.
func TestAsOfOutsideHistoryWarned(t *testing.T) {
	w := testWorld(t)
	for _, tc := range []struct {
		asOf      time.Time
		want, log string // on the summary in the report's language (id), in the log in English
	}{
		{firstSync.AddDate(0, 0, -3), "berakhir sebelum sinkronisasi pertama billsync untuk akun main", "ends before billsync's first sync of account main"},
		{time.Now().AddDate(0, 0, 3), "sesudah hari ini", "is after today"},
		{secondSync, "", ""},
	} {
		var logs bytes.Buffer
		files, err := Generate(context.Background(), Options{Report: config.Report{ReportsOut: t.TempDir()}, DB: w.db, AsOf: tc.asOf, Names: []string{"aging"},
			Formats: []string{"xlsx"}, Log: slog.New(slog.NewTextHandler(&logs, nil))})
		if err != nil {
			t.Fatal(err)
		}
		f, err := excelize.OpenFile(files[0])
		if err != nil {
			t.Fatal(err)
		}
		rows, _ := f.GetRows(f.GetSheetList()[0]) // the summary, its tab in the report's language
		f.Close()
		var warning string
		for _, r := range rows {
			if len(r) > 1 && (r[0] == "Peringatan" || r[0] == "Warning") { // the default locale is id
				warning = r[1]
			}
		}
		switch {
		case tc.want == "" && (warning != "" || strings.Contains(logs.String(), "WARN")):
			t.Errorf("as of %s: warned although the history covers it: %q %s", tc.asOf, warning, logs.String())
		case tc.want != "" && (!strings.Contains(warning, tc.want) || !strings.Contains(logs.String(), "level=WARN msg=\"as of") ||
			!strings.Contains(logs.String(), tc.log)):
			t.Errorf("as of %s: summary warning %q, log %s; want %q on the summary, %q in the log", tc.asOf, warning, logs.String(), tc.want, tc.log)
		case tc.want != "" && strings.Contains(warning, tc.log):
			t.Errorf("as of %s: the Indonesian summary warns in English: %q", tc.asOf, warning)
		}
	}
}
