package jobs

import (
	"encoding/csv"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/billsync/billsync/internal/cellsafe"
	"github.com/xuri/excelize/v2"
)

// PlanTable is the plan as rows under a header: what will be sent and the values it will change.
func PlanTable(p *Plan) [][]string {
	reqCols := fieldOrder(p, func(a *Action) map[string]string { return a.Request })
	curCols := fieldOrder(p, func(a *Action) map[string]string { return a.Current })
	head := []string{"seq", "line", "action_id", "state", "target", "change"}
	for _, c := range reqCols {
		head = append(head, "send."+c)
	}
	for _, c := range curCols {
		head = append(head, "current."+c)
	}
	out := [][]string{head}
	for _, a := range p.Actions {
		row := []string{strconv.Itoa(a.Seq), strconv.Itoa(a.Line), a.ID, string(a.State), a.Target, a.Change}
		for _, c := range reqCols {
			row = append(row, a.Request[c])
		}
		for _, c := range curCols {
			row = append(row, a.Current[c])
		}
		out = append(out, row)
	}
	return out
}

// ResultTable is each action's outcome: state, error, and what the service answered (new balance, links).
func ResultTable(p *Plan) [][]string {
	s, _ := spec(p.Kind)
	var results []string
	if s != nil {
		results = s.results
	}
	head := append([]string{"seq", "line", "action_id", "target", "state", "sends", "error"}, results...)
	head = append(head, "reconciled", "read", "missing", "to settle")
	out := [][]string{head}
	for _, a := range p.Actions {
		row := []string{strconv.Itoa(a.Seq), strconv.Itoa(a.Line), a.ID, a.Target, string(a.State),
			strconv.Itoa(a.Sends), a.Error}
		for _, c := range results {
			row = append(row, a.Detail[c])
		}
		out = append(out, append(row, a.Detail["reconciled"], a.Detail["read"], a.Detail["missing"], a.Detail["settle"]))
	}
	return out
}

// fieldOrder lists the keys used by any action: the kind's input columns first, then the rest sorted.
func fieldOrder(p *Plan, m func(*Action) map[string]string) []string {
	seen := map[string]bool{}
	for _, a := range p.Actions {
		for k := range m(a) {
			seen[k] = true
		}
	}
	var out []string
	if s, err := spec(p.Kind); err == nil {
		for _, c := range s.columns {
			if seen[c.name] {
				out = append(out, c.name)
				delete(seen, c.name)
			}
		}
	}
	var rest []string
	for k := range seen {
		rest = append(rest, k)
	}
	sort.Strings(rest)
	return append(out, rest...)
}

// WriteTableFile writes rows as .csv or .xlsx, by the path's extension.
func WriteTableFile(path, sheet string, rows [][]string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	switch strings.ToLower(filepath.Ext(path)) {
	case ".csv":
		return writeCSV(path, rows)
	case ".xlsx":
		return writeXLSX(path, sheet, rows)
	}
	return fmt.Errorf("write %s: unknown file type: want .csv or .xlsx", path)
}

func writeCSV(path string, rows [][]string) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	w := csv.NewWriter(f)
	for _, r := range rows {
		w.Write(defuse(r))
	}
	w.Flush()
	if err := w.Error(); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	return f.Close()
}

// defuse keeps a spreadsheet from running text that came from customers (names, descriptions) as a
// formula, with the one rule report files use, so readCSV can take the mark off again.
func defuse(r []string) []string {
	out := make([]string, len(r))
	for i, v := range r {
		out[i] = cellsafe.Text(v)
	}
	return out
}

func writeXLSX(path, sheet string, rows [][]string) error {
	f := excelize.NewFile()
	defer f.Close()
	if err := f.SetSheetName("Sheet1", sheet); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	for i, r := range rows {
		cells := make([]any, len(r))
		for k, v := range r {
			cells[k] = v // strings stay text: nothing a customer typed becomes a formula
		}
		cell, _ := excelize.CoordinatesToCellName(1, i+1)
		if err := f.SetSheetRow(sheet, cell, &cells); err != nil {
			return fmt.Errorf("write %s: %w", path, err)
		}
	}
	if len(rows) > 0 {
		f.SetPanes(sheet, &excelize.Panes{Freeze: true, YSplit: 1, TopLeftCell: "A2", ActivePane: "bottomLeft"})
		last, _ := excelize.CoordinatesToCellName(len(rows[0]), len(rows))
		f.AutoFilter(sheet, "A1:"+last, nil)
	}
	if err := f.SaveAs(path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// PrintPlan writes a short human summary of a plan: header and up to limit actions (0 = all).
func PrintPlan(w io.Writer, p *Plan, limit int) {
	fmt.Fprintf(w, "plan %s: %s, %d action(s), account %s, from %s\n", p.ID, p.Kind, len(p.Actions), p.Account, p.Input)
	fmt.Fprintf(w, "  created %s by %s on %s; validated against the warehouse synced %s\n",
		p.CreatedAt.UTC().Format("2006-01-02 15:04:05 MST"), p.CreatedBy, p.Host, stamp(p.WarehouseSyncedAt))
	if !p.ApprovedAt.IsZero() {
		fmt.Fprintf(w, "  approved %s by %s\n", p.ApprovedAt.UTC().Format("2006-01-02 15:04:05 MST"), p.ApprovedBy)
	}
	if len(p.SkippedLines) > 0 {
		fmt.Fprintf(w, "  left out (blank toEmail): lines %s\n", joinInts(p.SkippedLines))
	}
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "  SEQ\tLINE\tSTATE\tTARGET\tCHANGE")
	for i, a := range p.Actions {
		if limit > 0 && i == limit {
			fmt.Fprintf(tw, "  …\t\t\t%d more in the plan file\t\n", len(p.Actions)-limit)
			break
		}
		fmt.Fprintf(tw, "  %d\t%d\t%s\t%s\t%s\n", a.Seq, a.Line, a.State, a.Target, a.Change)
	}
	tw.Flush()
}

// PrintResult writes a short human summary of a run.
func PrintResult(w io.Writer, r *RunResult) {
	if r.RunID == 0 {
		fmt.Fprintf(w, "plan %s: nothing to send: %d succeeded, %d failed earlier", r.Plan.ID, r.Succeeded, r.Failed)
		if r.Unresolved > 0 {
			fmt.Fprintf(w, ", %d unresolved (waiting for a person)", r.Unresolved)
		}
		fmt.Fprintln(w)
		for _, a := range r.Plan.Actions {
			if a.State == Unresolved {
				printUnresolved(w, r.Plan, a)
			}
		}
		return
	}
	fmt.Fprintf(w, "run %d of plan %s: %s; sent %d, reconciled %d; plan now %d succeeded, %d failed, %d unresolved\n",
		r.RunID, r.Plan.ID, r.Status, r.Sent, r.Reconciled, r.Succeeded, r.Failed, r.Unresolved)
	if r.Stopped != "" {
		fmt.Fprintf(w, "  stopped early: %s\n", r.Stopped)
	}
	for _, a := range r.Plan.Actions {
		switch a.State {
		case Failed, Unknown, Sent:
			fmt.Fprintf(w, "  row %d, line %d (%s): %s %s\n", a.Seq, a.Line, a.Target, a.State, a.Error)
			if v := a.Detail["waiting"]; v != "" && a.State == Unknown {
				fmt.Fprintf(w, "    %s\n", v)
			}
		case Unresolved:
			printUnresolved(w, r.Plan, a)
		}
	}
}

// PrintUnresolved lists the plan's unresolved actions with what a person needs to settle each.
func PrintUnresolved(w io.Writer, p *Plan) {
	for _, a := range p.Actions {
		if a.State == Unresolved {
			printUnresolved(w, p, a)
		}
	}
}

// printUnresolved shows a person everything needed to settle an action by hand.
func printUnresolved(w io.Writer, p *Plan, a *Action) {
	fmt.Fprintf(w, "  row %d, line %d (%s): UNRESOLVED, not sent again: %s\n", a.Seq, a.Line, a.Target, a.Detail["reconciled"])
	if v := a.Detail["read"]; v != "" {
		fmt.Fprintf(w, "    read:    %s\n", v)
	}
	if v := a.Detail["missing"]; v != "" {
		fmt.Fprintf(w, "    missing: %s\n", v)
	}
	fmt.Fprintf(w, "    check on the service whether %s happened, then: %s\n", a.Change, ResolveCommand(p.ID, a.Seq))
}

func joinInts(ns []int) string {
	s := make([]string, len(ns))
	for i, n := range ns {
		s[i] = strconv.Itoa(n)
	}
	return strings.Join(s, ", ")
}
