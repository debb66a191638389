// Package delivery sends the finance reports to people by e-mail: the schedule file
// (BILLSYNC_DELIVERIES) declares named deliveries, an occurrence (a delivery and its as-of date)
// is built with internal/report, written as a message with each report's headline figures and
// checks, and sent over SMTP or into a file outbox. A journal beside the warehouse
// (billsync-deliveries.duckdb) records each occurrence, so one is sent once: the only repeat
// is a crash between the server's acceptance and the journal's record, which resends it once,
// marked in the subject. docs/delivery.md is the user's reference.
package delivery

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/billsync/billsync/internal/config"
	"github.com/billsync/billsync/internal/report"
	"github.com/billsync/billsync/internal/schedule"
	"github.com/robfig/cron/v3"
	"gopkg.in/yaml.v3"
)

// Delivery is one named delivery of the schedule file.
type Delivery struct {
	Name     string            `yaml:"name"`
	Reports  []string          `yaml:"reports"`
	Schedule string            `yaml:"schedule"` // cron spec in BILLSYNC_TZ
	AsOf     string            `yaml:"as_of"`    // a rule (AsOfRules) or YYYY-MM-DD
	Vars     map[string]string `yaml:"vars"`     // report variables (report -list)
	Format   string            `yaml:"format"`   // xlsx, csv or both; default xlsx
	Locale   string            `yaml:"locale"`   // id or en; default BILLSYNC_LOCALE (Inherit)
	// CSVDialect is the dialect of the delivery's CSV files, rfc or id; "" = BILLSYNC_CSV_DIALECT.
	CSVDialect string   `yaml:"csv_dialect"`
	Account    string   `yaml:"account"` // only this account; default all
	To         []string `yaml:"to"`
	Cc         []string `yaml:"cc"`
	// MaxAttachMB: attachments above this many megabytes in all are not attached; the message
	// says where the files are instead. Default 20.
	MaxAttachMB float64 `yaml:"max_attach_mb"`
	// LateWindow: an occurrence missed while the daemon was down is sent late within this long
	// after its time; older ones are only reported. Default 24h.
	LateWindow Duration `yaml:"late_window"`
	// StaleWait: how long the daemon waits for a sync that reflects the as-of date before it
	// sends the occurrence marked stale. Default 2h.
	StaleWait Duration `yaml:"stale_wait"`
	// MaxAge: for an as-of date not yet over when the message is made (as_of: today), the
	// figures are fresh when the newest sync finished that day and at most this long before.
	// Default 12h.
	MaxAge Duration `yaml:"max_age"`

	line      int           // where it is declared, for errors found later
	sched     cron.Schedule // Schedule, parsed in the file's zone
	localeSet bool          // the file names the locale; else it is BILLSYNC_LOCALE's (Inherit)
}

// Inherit gives each delivery that names no locale of its own the locale of report's settings
// (BILLSYNC_LOCALE): its messages, subjects and files are in that language, as report's would be.
func (f *File) Inherit(rep config.Report) {
	for i, d := range f.Deliveries {
		f.Deliveries[i] = d.with(rep)
	}
}

// with is d following rep where its file says nothing: its locale.
func (d *Delivery) with(rep config.Report) *Delivery {
	if d.localeSet || rep.Locale == "" || d.Locale == rep.Locale {
		return d
	}
	c := *d
	c.Locale = rep.Locale
	return &c
}

// Settings are the report settings an occurrence of d renders with: report's (base, whole, as the
// command read them) with the delivery's own locale and CSV dialect where its file names them.
// Its vars go to the report as report -var does.
func (d *Delivery) Settings(base config.Report) config.Report {
	r := base
	if d.localeSet || r.Locale == "" {
		r.Locale = d.Locale
	}
	if d.CSVDialect != "" {
		r.CSVDialect = d.CSVDialect
	}
	return r
}

// Duration is a time.Duration written as Go writes it ("90m", "24h").
type Duration struct{ time.Duration }

// UnmarshalYAML reads a duration such as 36h.
func (d *Duration) UnmarshalYAML(n *yaml.Node) error {
	v, err := time.ParseDuration(n.Value)
	if err != nil || v < 0 {
		return fmt.Errorf("line %d: %q: want a duration such as 90m or 24h", n.Line, n.Value)
	}
	d.Duration = v
	return nil
}

// Defaults of a delivery's optional fields.
const (
	DefaultMaxAttachMB = 20
	DefaultLateWindow  = 24 * time.Hour
	DefaultStaleWait   = 2 * time.Hour
	DefaultMaxAge      = 12 * time.Hour
)

// File is a parsed schedule file.
type File struct {
	Path       string
	Loc        *time.Location // BILLSYNC_TZ: the schedules' and the as-of rules' zone
	Deliveries []*Delivery
}

// Find is the delivery called name.
func (f *File) Find(name string) (*Delivery, error) {
	for _, d := range f.Deliveries {
		if d.Name == name {
			return d, nil
		}
	}
	var names []string
	for _, d := range f.Deliveries {
		names = append(names, d.Name)
	}
	return nil, fmt.Errorf("%s: no delivery %q (declared: %s)", f.Path, name, strings.Join(names, ", "))
}

// Next is the delivery's first scheduled time after t.
func (d *Delivery) Next(t time.Time) time.Time { return d.sched.Next(t) }

// fields are the keys a delivery accepts, in the order the reference lists them.
var fields = []string{"name", "reports", "schedule", "as_of", "vars", "format", "locale", "csv_dialect", "account",
	"to", "cc", "max_attach_mb", "late_window", "stale_wait", "max_age"}

var nameRE = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]*$`)

// Load reads and checks the schedule file at path: every mistake found, each with its line.
func Load(path string, loc *time.Location) (*File, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("schedule file: %w", err)
	}
	return Parse(path, b, loc)
}

// Parse checks a schedule file's text; path names it in errors.
func Parse(path string, b []byte, loc *time.Location) (*File, error) {
	f := &File{Path: path, Loc: loc}
	var doc yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(&doc); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, fmt.Errorf("%s: want a mapping with a deliveries list", path)
	}
	root := doc.Content[0]
	var list *yaml.Node
	var errs []error
	at := func(n *yaml.Node, format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s:%d: %s", path, n.Line, fmt.Sprintf(format, args...)))
	}
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], root.Content[i+1]
		if k.Value != "deliveries" {
			at(k, "unknown field %q (want deliveries)", k.Value)
			continue
		}
		list = v
	}
	if list == nil || list.Kind != yaml.SequenceNode || len(list.Content) == 0 {
		if list == nil {
			list = root
		}
		at(list, "deliveries: want a list of at least one delivery")
		return nil, errors.Join(errs...)
	}
	seen := map[string]int{}
	for _, n := range list.Content {
		d, derrs := parseDelivery(path, n, loc)
		errs = append(errs, derrs...)
		if d == nil {
			continue
		}
		if first, dup := seen[d.Name]; dup && d.Name != "" {
			at(n, "delivery %q declared twice (first on line %d)", d.Name, first)
		}
		seen[d.Name] = n.Line
		f.Deliveries = append(f.Deliveries, d)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return f, nil
}

// parseDelivery decodes and checks one delivery: unknown keys, missing and malformed values.
func parseDelivery(path string, n *yaml.Node, loc *time.Location) (*Delivery, []error) {
	var errs []error
	at := func(n *yaml.Node, format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s:%d: %s", path, n.Line, fmt.Sprintf(format, args...)))
	}
	if n.Kind != yaml.MappingNode {
		at(n, "a delivery is a mapping (name:, reports:, schedule:, as_of:, to:)")
		return nil, errs
	}
	val := map[string]*yaml.Node{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := n.Content[i]
		if !slices.Contains(fields, k.Value) {
			at(k, "unknown field %q (want one of %s)", k.Value, strings.Join(fields, ", "))
			continue
		}
		val[k.Value] = n.Content[i+1]
	}
	d := &Delivery{line: n.Line}
	if err := n.Decode(d); err != nil {
		// yaml's own message has the line of the value it could not read
		at(n, "%v", strings.TrimPrefix(err.Error(), "yaml: unmarshal errors:\n  "))
		return nil, errs
	}
	where := func(field string) *yaml.Node {
		if v, ok := val[field]; ok {
			return v
		}
		return n
	}
	switch {
	case d.Name == "":
		at(n, "name: missing")
	case !nameRE.MatchString(d.Name):
		at(where("name"), "name %q: want lower-case letters, digits, - and _", d.Name)
	}
	if len(d.Reports) == 0 {
		at(where("reports"), "reports: want at least one report (report -list)")
	} else if err := report.CheckVars(d.Reports, d.Vars, false); err != nil {
		at(where("reports"), "%v", err)
	}
	if d.Schedule == "" {
		at(where("schedule"), "schedule: missing (a cron spec such as \"0 7 * * *\", in BILLSYNC_TZ)")
	} else if s, err := schedule.Parse(d.Schedule, loc); err != nil {
		at(where("schedule"), "%v", err)
	} else {
		d.sched = s
	}
	if d.AsOf == "" {
		at(where("as_of"), "as_of: missing (%s or YYYY-MM-DD)", strings.Join(AsOfRules, ", "))
	} else if _, err := AsOfDate(d.AsOf, time.Now(), loc); err != nil {
		at(where("as_of"), "%v", err)
	}
	switch d.Format {
	case "":
		d.Format = "xlsx"
	case "xlsx", "csv", "both":
	default:
		at(where("format"), "format %q: want xlsx, csv or both", d.Format)
	}
	d.localeSet = d.Locale != ""
	if !d.localeSet {
		d.Locale = config.DefaultLocale // until Inherit gives it BILLSYNC_LOCALE
	}
	if err := report.CheckLocale(d.Locale); err != nil {
		at(where("locale"), "%v", err)
	}
	if d.CSVDialect != "" {
		if err := report.CheckCSVDialect(d.CSVDialect); err != nil {
			at(where("csv_dialect"), "%v", err)
		}
	}
	if len(d.To) == 0 {
		at(where("to"), "to: want at least one address")
	}
	for field, list := range map[string][]string{"to": d.To, "cc": d.Cc} {
		for _, a := range list {
			if err := config.CheckAddress(a); err != nil {
				at(where(field), "%s: %v", field, err)
			}
		}
	}
	if d.MaxAttachMB == 0 {
		d.MaxAttachMB = DefaultMaxAttachMB
	} else if d.MaxAttachMB < 0 {
		at(where("max_attach_mb"), "max_attach_mb %s: must be positive", strconv.FormatFloat(d.MaxAttachMB, 'g', -1, 64))
	}
	if d.LateWindow.Duration == 0 {
		d.LateWindow.Duration = DefaultLateWindow
	}
	if d.StaleWait.Duration == 0 {
		d.StaleWait.Duration = DefaultStaleWait
	}
	if d.MaxAge.Duration == 0 {
		d.MaxAge.Duration = DefaultMaxAge
	}
	return d, errs
}

// AsOfRules are the relative as-of dates a delivery may name.
var AsOfRules = []string{"today", "yesterday", "end of last week", "end of last month"}

// AsOfDate is the as-of date a rule gives at time t, as a calendar date in loc (midnight UTC
// of that date, as report.Options.AsOf takes it). Weeks end on Sunday (ISO weeks).
func AsOfDate(rule string, t time.Time, loc *time.Location) (time.Time, error) {
	lt := t.In(loc)
	day := time.Date(lt.Year(), lt.Month(), lt.Day(), 0, 0, 0, 0, time.UTC)
	switch strings.Join(strings.Fields(strings.ToLower(rule)), " ") {
	case "today":
		return day, nil
	case "yesterday":
		return day.AddDate(0, 0, -1), nil
	case "end of last week":
		wd := int(day.Weekday()) // Sunday 0
		if wd == 0 {
			wd = 7
		}
		return day.AddDate(0, 0, -wd), nil
	case "end of last month":
		return time.Date(day.Year(), day.Month(), 1, 0, 0, 0, 0, time.UTC).AddDate(0, 0, -1), nil
	}
	d, err := time.Parse(time.DateOnly, rule)
	if err != nil {
		return time.Time{}, fmt.Errorf("as_of %q: want %s or a date YYYY-MM-DD", rule, strings.Join(AsOfRules, ", "))
	}
	return d, nil
}
