package report

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"path"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/billsync/billsync/queries"
	"github.com/billsync/billsync/reports"
	"gopkg.in/yaml.v3"
)

// Definition is one report as reports/<name>.yaml describes it.
type Definition struct {
	Name        string  `yaml:"name"`
	Title       Text    `yaml:"title"`
	Description Text    `yaml:"description"`
	Vars        []Var   `yaml:"vars"`
	Notes       []Text  `yaml:"notes"`
	Sheets      []Sheet `yaml:"sheets"`
	Chart       *Chart  `yaml:"chart"`
	// Shared names table macros several sheets call alike: the report calls each once
	// (sharedcall.go, report.go).
	Shared []string `yaml:"shared"`

	shared []*sharedCall
}

// Var is a query parameter beyond as_of, tz and account. An empty Default
// leaves the default to the query file.
type Var struct {
	Name    string   `yaml:"name"`
	Type    string   `yaml:"type"`
	Default string   `yaml:"default"`
	Values  []string `yaml:"values"`
	Doc     string   `yaml:"doc"`
	// Min and Max bound an INTEGER variable; Above names the variable it must exceed
	// (ordered buckets). Checked before any query runs.
	Min   *int64 `yaml:"min"`
	Max   *int64 `yaml:"max"`
	Above string `yaml:"above"`
}

// Sheet is one data sheet: a query file and how to show its columns. Name
// names the CSV file and is the sheet's reference; Title is its tab.
type Sheet struct {
	Name       string      `yaml:"name"`
	Title      Text        `yaml:"title"`
	Query      string      `yaml:"query"`
	Totals     Text        `yaml:"totals"` // label of the totals row; empty = no totals row
	Check      *Check      `yaml:"check"`
	Exceptions *Exceptions `yaml:"exceptions"`
	// Headline copies the sheet's rows onto the summary (a small table of
	// subtotals, where a grand total would add things that do not add up).
	Headline bool `yaml:"headline"`
	// HeadlineTable prints a headline sheet's rows on the summary as a small table (a row per
	// subtotal, a column per figure) instead of a line of figures per row; a sheet the summary
	// shows whole does not print again (prints).
	HeadlineTable bool `yaml:"headline_table"`
	// PrintOnly keeps the workbook's sheet to the rows a reader must look at; the sheet's CSV
	// keeps every row. With none to look at, the sheet does not print (prints).
	PrintOnly *RowFilter `yaml:"print_only"`
	// Count names the number of the sheet's rows among the summary's headline figures
	// ("Jumlah pelanggan"); empty leaves it off.
	Count Text `yaml:"count"`
	// CountWhere makes Count count only the rows whose column holds one of the values (the
	// failed runs among the runs listed); nil counts every row.
	CountWhere *RowFilter `yaml:"count_where"`
	Columns    []Column   `yaml:"columns"`
}

// RowFilter picks the rows whose Column holds one of Values (as the query returns them).
type RowFilter struct {
	Column string   `yaml:"column"`
	Values []string `yaml:"values"`
}

// Exceptions counts the rows whose Column holds one of Values (a
// reconciliation's verdict); the summary shows the count.
type Exceptions struct {
	Label  Text     `yaml:"label"`
	Column string   `yaml:"column"`
	Values []string `yaml:"values"`
	// Checked are the values of rows that were checked at all; empty = every
	// non-NULL value. With none checked the summary says so instead of a pass.
	Checked []string `yaml:"checked"`
	// None is said in the label's place when no row could be checked: a label naming the
	// failure ("MISMATCH") beside "not checked" reads as one.
	None Text `yaml:"none"`
}

// prints says whether a sheet of n workbook rows prints: not when it has no row a reader must
// look at (PrintOnly), nor when the summary's table shows every row (HeadlineTable).
func (s *Sheet) prints(n int) bool {
	return !(s.PrintOnly != nil && n == 0) && !(s.HeadlineTable && n <= headlineRows)
}

// tab is the sheet's tab name in locale l.
func (s *Sheet) tab(l string) string {
	if t := s.Title.In(l); t != "" {
		return t
	}
	return s.Name
}

// Column says how a query column looks. Columns a definition does not list
// are shown with their query name and a format chosen from their type.
// Columns are shown in the definition's order.
type Column struct {
	Name   string  `yaml:"name"`
	Title  Text    `yaml:"title"`
	Format string  `yaml:"format"`
	Width  float64 `yaml:"width"` // most characters; the content decides below it, longer text wraps
	Total  Total   `yaml:"total"`
	Codes  bool    `yaml:"codes"` // values are service codes: shown by their friendly name
	Empty  Text    `yaml:"empty"` // shown in place of a NULL (why there is no value)
	// Reference columns (IDs, URLs) go last and are left out of the print area.
	Reference bool `yaml:"reference"`
	// TellApart names the ID column (customer_id or product_id) of a customer's or product's
	// name: where another customer (product) carries the name too, the workbook prints the
	// start of the ID after it, as the ID itself is out of print (samenames.go).
	TellApart string `yaml:"tell_apart"`
	// Headline false leaves a figure off the summary's headline (it stays on the sheet): the
	// detail of a check the summary states once, repeated on every line of a headline sheet,
	// or a total another sheet's headline figure already gives.
	Headline *bool `yaml:"headline"`
	// Summary is the figure's label among the summary's headline figures, in the words a
	// controller uses ("Item terbuka" where the sheet's column says "Item"); empty = the title.
	Summary Text `yaml:"summary"`
}

// tellApartKinds are the ID columns TellApart may name, and what they identify.
var tellApartKinds = map[string]string{"customer_id": "customer", "product_id": "product"}

// Total is how a column's totals-row value is computed: "sum", a weighted
// average {weighted_by: col}, or a ratio of totals {ratio: col, of: [cols]}.
type Total struct {
	Sum        bool
	WeightedBy string
	Ratio      string
	Of         []string
}

func (t *Total) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.ScalarNode {
		if n.Value != "sum" {
			return fmt.Errorf("line %d: total %q: want sum, {weighted_by: col} or {ratio: col, of: [cols]}", n.Line, n.Value)
		}
		t.Sum = true
		return nil
	}
	var m struct {
		WeightedBy string   `yaml:"weighted_by"`
		Ratio      string   `yaml:"ratio"`
		Of         []string `yaml:"of"`
	}
	if err := n.Decode(&m); err != nil {
		return err
	}
	t.WeightedBy, t.Ratio, t.Of = m.WeightedBy, m.Ratio, m.Of
	return nil
}

func (t Total) any() bool { return t.Sum || t.WeightedBy != "" || t.Ratio != "" }

// Check is a reconciliation row under the totals: sum(Sum) - sum(Minus) - Equals
// must be zero; the row shows the difference in the Equals column.
type Check struct {
	Label  Text     `yaml:"label"`
	Sum    []string `yaml:"sum"`
	Minus  []string `yaml:"minus"`
	Equals string   `yaml:"equals"`
}

// Chart is a native chart on the summary sheet. From "totals": one bar per
// column, the values of the sheet's totals row. From "rows": one series per
// column over the sheet's rows, labelled by Category.
type Chart struct {
	Type     string   `yaml:"type"`
	Title    Text     `yaml:"title"`
	Sheet    string   `yaml:"sheet"`
	From     string   `yaml:"from"`
	Category string   `yaml:"category"`
	Columns  []string `yaml:"columns"`
}

var (
	reportRe   = regexp.MustCompile(`^[a-z][a-z0-9-]*$`)
	varTypes   = []string{"VARCHAR", "INTEGER", "DATE", "BOOLEAN", "DOUBLE"}
	formats    = []string{"", "text", "int", "money", "credit", "decimal1", "decimal2", "rating", "percent", "date", "month", "datetime"}
	chartTypes = []string{"col", "bar", "line", "pie"}
	// builtinVars are set for every report by Options, not by definitions.
	builtinVars = []string{"as_of", "tz", "account"}
)

// Definitions loads and checks every embedded report definition, by name.
func Definitions() ([]*Definition, error) {
	return loadDefinitions(reports.FS, queries.FS)
}

func loadDefinitions(defs, sqls fs.FS) ([]*Definition, error) {
	files, err := fs.Glob(defs, "*.yaml")
	if err != nil {
		return nil, err
	}
	var out []*Definition
	for _, f := range files {
		b, err := fs.ReadFile(defs, f)
		if err != nil {
			return nil, err
		}
		d, err := parseDefinition(b, sqls)
		if err != nil {
			return nil, fmt.Errorf("report definition reports/%s: %w", f, err)
		}
		if want := strings.TrimSuffix(f, ".yaml"); d.Name != want {
			return nil, fmt.Errorf("report definition reports/%s: name %q differs from the file name", f, d.Name)
		}
		out = append(out, d)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

func parseDefinition(b []byte, sqls fs.FS) (*Definition, error) {
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	var d Definition
	if err := dec.Decode(&d); err != nil {
		return nil, err
	}
	return &d, d.validate(sqls)
}

func (d *Definition) validate(sqls fs.FS) error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if !reportRe.MatchString(d.Name) {
		bad("name %q: want lower-case letters, digits and dashes", d.Name)
	}
	if len(d.Title) == 0 {
		bad("title is empty")
	}
	for _, v := range d.Vars {
		if !nameRe.MatchString(v.Name) || slices.Contains(builtinVars, v.Name) {
			bad("var %q: not a usable variable name", v.Name)
		}
		if !slices.Contains(varTypes, v.Type) {
			bad("var %s: type %q is not one of %v", v.Name, v.Type, varTypes)
		}
		if v.Default != "" && len(v.Values) > 0 && !slices.Contains(v.Values, v.Default) {
			bad("var %s: default %q is not one of %v", v.Name, v.Default, v.Values)
		}
		if (v.Min != nil || v.Max != nil || v.Above != "") && v.Type != "INTEGER" {
			bad("var %s: min, max and above apply to INTEGER variables", v.Name)
		}
		if v.Above != "" && !slices.ContainsFunc(d.Vars, func(o Var) bool { return o.Name == v.Above }) {
			bad("var %s: above %q, which the report does not declare", v.Name, v.Above)
		}
	}
	if err := d.checkValues(nil); err != nil {
		bad("defaults: %w", err)
	}
	if len(d.Sheets) == 0 {
		bad("no sheets")
	}
	sheets := map[string]*Sheet{}
	for i := range d.Sheets {
		s := &d.Sheets[i]
		if err := s.validate(sqls); err != nil {
			bad("sheet %q: %w", s.Name, err)
		}
		if sheets[strings.ToLower(s.Name)] != nil || strings.EqualFold(s.Name, summarySheet) {
			bad("sheet name %q used twice", s.Name)
		}
		sheets[strings.ToLower(s.Name)] = s
	}
	if c := d.Chart; c != nil {
		if err := c.validate(sheets[strings.ToLower(c.Sheet)]); err != nil {
			bad("chart: %w", err)
		}
	}
	var err error
	files := make([]string, len(d.Sheets))
	for i, sh := range d.Sheets {
		files[i] = sh.Query
	}
	if d.shared, err = sharedCalls(d.Shared, files, sqls); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

func (s *Sheet) validate(sqls fs.FS) error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	// Excel limits sheet names to 31 characters and forbids some.
	for _, n := range append([]string{s.Name}, s.tab("id"), s.tab("en")) {
		if n == "" || len(n) > 31 || strings.ContainsAny(n, `[]:*?/\`) {
			bad("%q is not a valid sheet name", n)
		}
	}
	if path.Ext(s.Query) != ".sql" {
		bad("query %q: want a .sql file name", s.Query)
	} else if _, err := fs.Stat(sqls, s.Query); err != nil {
		bad("query %s: not in queries/", s.Query)
	}
	seen := map[string]bool{}
	for _, c := range s.Columns {
		if seen[c.Name] {
			bad("column %s listed twice", c.Name)
		}
		seen[c.Name] = true
		if !slices.Contains(formats, c.Format) {
			bad("column %s: format %q is not one of %v", c.Name, c.Format, formats[1:])
		}
	}
	for _, c := range s.Columns {
		if c.TellApart == "" {
			continue
		}
		if _, ok := tellApartKinds[c.TellApart]; !ok || !seen[c.TellApart] || (c.Format != "" && c.Format != "text") {
			bad("column %s: tell_apart %q: want a text column and customer_id or product_id, a column of the sheet", c.Name, c.TellApart)
		}
	}
	for _, c := range s.Columns {
		for _, ref := range append([]string{c.Total.WeightedBy, c.Total.Ratio}, c.Total.Of...) {
			if ref != "" && !seen[ref] {
				bad("column %s: total refers to unknown column %s", c.Name, ref)
			}
		}
		if c.Total.Ratio != "" && len(c.Total.Of) == 0 {
			bad("column %s: ratio total without of", c.Name)
		}
	}
	if e := s.Exceptions; e != nil && (!seen[e.Column] || len(e.Values) == 0) {
		bad("exceptions: column %q is not a column of the sheet, or no values", e.Column)
	}
	if s.HeadlineTable && !s.Headline {
		bad("headline_table without headline")
	}
	if s.HeadlineTable {
		// The summary's table has a cell per figure under the value column, split in
		// summaryTableCols columns.
		n := 0
		for _, c := range s.Columns {
			if !c.Reference && c.Format != "" && c.Format != "text" && (c.Headline == nil || *c.Headline) {
				n++
			}
		}
		if n > summaryTableCols {
			bad("headline_table: %d figures, the summary's table has room for %d (headline: false leaves one off)", n, summaryTableCols)
		}
	}
	if w := s.CountWhere; w != nil && (len(s.Count) == 0 || !seen[w.Column] || len(w.Values) == 0) {
		bad("count_where: without count, or column %q is not a column of the sheet, or no values", w.Column)
	}
	if p := s.PrintOnly; p != nil && (!seen[p.Column] || len(p.Values) == 0) {
		bad("print_only: column %q is not a column of the sheet, or no values", p.Column)
	}
	if s.Check != nil {
		for _, ref := range append(append([]string{s.Check.Equals}, s.Check.Sum...), s.Check.Minus...) {
			if !seen[ref] || (len(s.Totals) > 0 && !s.column(ref).Total.Sum) {
				bad("check refers to %q, which is not a summed column", ref)
			}
		}
	}
	return errors.Join(errs...)
}

// tellsApart says a sheet of the report prints names other customers or products may carry.
func (d *Definition) tellsApart() bool {
	for _, s := range d.Sheets {
		if slices.ContainsFunc(s.Columns, func(c Column) bool { return c.TellApart != "" }) {
			return true
		}
	}
	return false
}

func (s *Sheet) column(name string) *Column {
	for i := range s.Columns {
		if s.Columns[i].Name == name {
			return &s.Columns[i]
		}
	}
	return nil
}

func (c *Chart) validate(s *Sheet) error {
	if s == nil {
		return fmt.Errorf("sheet %q is not a sheet of this report", c.Sheet)
	}
	if !slices.Contains(chartTypes, c.Type) {
		return fmt.Errorf("type %q is not one of %v", c.Type, chartTypes)
	}
	switch c.From {
	case "totals":
		if len(s.Totals) == 0 {
			return fmt.Errorf("from totals, but sheet %q has no totals row", s.Name)
		}
	case "rows":
		if s.column(c.Category) == nil {
			return fmt.Errorf("category %q is not a column of sheet %q", c.Category, s.Name)
		}
	default:
		return fmt.Errorf("from %q: want totals or rows", c.From)
	}
	if len(c.Columns) == 0 {
		return errors.New("no columns")
	}
	for _, name := range c.Columns {
		col := s.column(name)
		if col == nil || (c.From == "totals" && !col.Total.any()) {
			return fmt.Errorf("column %q is not a column of sheet %q with a total", name, s.Name)
		}
	}
	return nil
}

// placeholderRe matches {name} and {name+N} in titles and notes.
var placeholderRe = regexp.MustCompile(`\{([a-z_][a-z0-9_]*)(\+\d+)?\}`)

// expand fills {name} placeholders from vals; {name+N} adds N to a number.
// Unknown names stay as they are, so a typo shows in the workbook.
func expand(s string, vals map[string]string) string {
	return placeholderRe.ReplaceAllStringFunc(s, func(m string) string {
		sub := placeholderRe.FindStringSubmatch(m)
		v, ok := vals[sub[1]]
		if !ok {
			return m
		}
		if sub[2] == "" {
			return v
		}
		n, err1 := strconv.ParseInt(v, 10, 64)
		add, err2 := strconv.ParseInt(sub[2][1:], 10, 64)
		if err1 != nil || err2 != nil {
			return m
		}
		return strconv.FormatInt(n+add, 10)
	})
}

// Text is a string of a report definition: one text for every locale, or one
// per locale ({id: ..., en: ...}).
type Text map[string]string

// In is the text in locale l, else English, else the one text.
func (t Text) In(l string) string {
	for _, k := range []string{l, "en", ""} {
		if s, ok := t[k]; ok {
			return s
		}
	}
	return ""
}

func (t Text) missing() []string {
	if _, ok := t[""]; ok || len(t) == 0 {
		return nil
	}
	var out []string
	for _, l := range locales {
		if _, ok := t[l]; !ok {
			out = append(out, l)
		}
	}
	return out
}

func (t Text) check() error {
	for k := range t {
		if k != "" && !slices.Contains(locales, k) {
			return fmt.Errorf("text in unknown locale %q (want %s)", k, strings.Join(locales, ", "))
		}
	}
	if m := t.missing(); len(m) > 0 {
		return fmt.Errorf("text %q has no %s version", t.In("en"), strings.Join(m, ", "))
	}
	return nil
}

func (t *Text) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.ScalarNode {
		*t = Text{"": n.Value}
		return nil
	}
	m := map[string]string{}
	if err := n.Decode(&m); err != nil {
		return fmt.Errorf("line %d: want a text or {id: ..., en: ...}: %w", n.Line, err)
	}
	*t = m
	if err := t.check(); err != nil {
		return fmt.Errorf("line %d: %w", n.Line, err)
	}
	return nil
}

const summarySheet = "Summary"

// selectReports returns the named definitions in the order given, or all.
func selectReports(names []string) ([]*Definition, error) {
	all, err := Definitions()
	if err != nil {
		return nil, err
	}
	if len(names) == 0 {
		return all, nil
	}
	var out []*Definition
	for _, n := range names {
		i := slices.IndexFunc(all, func(d *Definition) bool { return d.Name == n })
		if i < 0 {
			return nil, fmt.Errorf("no report named %q (reports: %s)", n, strings.Join(reportNames(all), ", "))
		}
		out = append(out, all[i])
	}
	return out, nil
}

func reportNames(defs []*Definition) []string {
	var n []string
	for _, d := range defs {
		n = append(n, d.Name)
	}
	return n
}

// CheckVars checks -var values before anything runs, for the reports named (all
// when none) or, with adhoc, for ad-hoc SQL: there any variable may be set, and
// the ones a report declares must suit it.
func CheckVars(names []string, vars map[string]string, adhoc bool) error {
	if !adhoc {
		defs, err := selectReports(names)
		if err != nil {
			return err
		}
		return checkVars(defs, vars)
	}
	defs, err := Definitions()
	if err != nil {
		return err
	}
	var errs []error
	for _, d := range defs {
		if !slices.ContainsFunc(d.Vars, func(v Var) bool { _, ok := vars[v.Name]; return ok }) {
			continue
		}
		if err := d.checkValues(vars); err != nil {
			errs = append(errs, fmt.Errorf("as report %s uses them: %w", d.Name, err))
		}
	}
	return errors.Join(errs...)
}

// checkVars rejects a variable that none of the chosen reports declares, and a
// value a report cannot use: not of its type, outside a declared list or
// bounds, or out of order with the variable it must exceed.
func checkVars(defs []*Definition, vars map[string]string) error {
	var errs []error
	for _, name := range slices.Sorted(maps.Keys(vars)) {
		known := false
		for _, d := range defs {
			known = known || slices.ContainsFunc(d.Vars, func(v Var) bool { return v.Name == name })
		}
		if !known {
			hint := ""
			if name == "as_of" || name == "tz" || name == "account" {
				hint = fmt.Sprintf(" (use -%s)", strings.ReplaceAll(name, "_", "-"))
			}
			errs = append(errs, fmt.Errorf("variable %s: none of the reports %s uses it%s", name, strings.Join(reportNames(defs), ", "), hint))
		}
	}
	for _, d := range defs {
		if err := d.checkValues(vars); err != nil {
			errs = append(errs, fmt.Errorf("report %s: %w", d.Name, err))
		}
	}
	return errors.Join(errs...)
}

// checkValues checks the values d's variables take with vars given (defaults
// for the rest).
func (d *Definition) checkValues(vars map[string]string) error {
	var errs []error
	ints := map[string]int64{}
	value := func(v Var) (string, bool) {
		if val, ok := vars[v.Name]; ok {
			return val, true
		}
		return v.Default, false
	}
	for _, v := range d.Vars {
		val, given := value(v)
		if val == "" {
			continue
		}
		src := "default"
		if given {
			src = "-var"
		}
		switch {
		case len(v.Values) > 0 && !slices.Contains(v.Values, val):
			errs = append(errs, fmt.Errorf("variable %s=%q (%s): want one of %s", v.Name, val, src, strings.Join(v.Values, ", ")))
			continue
		case v.Type == "DATE":
			if _, err := time.Parse(time.DateOnly, val); err != nil {
				errs = append(errs, fmt.Errorf("variable %s=%q (%s): want a date YYYY-MM-DD", v.Name, val, src))
			}
			continue
		case v.Type != "INTEGER":
			continue
		}
		n, err := strconv.ParseInt(strings.TrimSpace(val), 10, 64)
		if err != nil {
			errs = append(errs, fmt.Errorf("variable %s=%q (%s): want a whole number", v.Name, val, src))
			continue
		}
		ints[v.Name] = n
		if v.Min != nil && n < *v.Min {
			errs = append(errs, fmt.Errorf("variable %s=%d (%s): must be at least %d (%s)", v.Name, n, src, *v.Min, v.Doc))
		}
		if v.Max != nil && n > *v.Max {
			errs = append(errs, fmt.Errorf("variable %s=%d (%s): must be at most %d (%s)", v.Name, n, src, *v.Max, v.Doc))
		}
	}
	for _, v := range d.Vars {
		n, ok := ints[v.Name]
		lower, lok := ints[v.Above]
		if v.Above == "" || !ok || !lok || n > lower {
			continue
		}
		errs = append(errs, fmt.Errorf("variable %s=%d must be above %s=%d: the buckets are ordered", v.Name, n, v.Above, lower))
	}
	return errors.Join(errs...)
}

// List prints every report with its sheets and variables.
func List(w io.Writer) error {
	defs, err := Definitions()
	if err != nil {
		return err
	}
	for _, d := range defs {
		fmt.Fprintf(w, "%s\t%s\n", d.Name, d.Title.In("en"))
		for _, s := range d.Sheets {
			fmt.Fprintf(w, "\tsheet %q\tqueries/%s\n", s.Name, s.Query)
		}
		for _, v := range d.Vars {
			def := v.Default
			if def == "" {
				def = "(query default)"
			}
			fmt.Fprintf(w, "\t-var %s=%s\t%s\n", v.Name, def, v.Doc)
		}
	}
	fmt.Fprintln(w, "every report also takes -as-of, -tz and -account")
	return nil
}

// headlineRows is the most rows a headline sheet copies onto the summary.
const headlineRows = 30
