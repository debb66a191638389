package jobs

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/billsync/billsync/internal/api"
	"github.com/billsync/billsync/internal/cli"
	"github.com/billsync/billsync/internal/config"
	"github.com/billsync/billsync/internal/warehouse"
)

// CLI runs the subcommands of `syncer job` once cmd/syncer has parsed their flags and read and checked the
// settings: each method is one subcommand, printing what a person reads to Out and returning what the
// command exits with.
type CLI struct {
	Journal    string // the job journal's file
	Warehouse  string // the published warehouse file (read-only)
	Account    string
	BaseURL    string
	Production bool // BaseURL is the live service
	config.Approvals
	Settle, RepeatWindow time.Duration
	Files                FileOptions // the locale, zone and currency of what a job prints and writes
	User                 string      // who runs it, as the journal records it (Login)
	// Client is the configured service's client; its error is the command's (a missing key: exit 2).
	Client func() (*api.Client, error)
	Log    *slog.Logger                        // apply's log
	Usage  func(format string, a ...any) error // a command line that cannot run (exit 2, with the usage)
	Out    io.Writer
}

// PlanFlags are what syncer job plan and apply are asked to do.
type PlanFlags struct {
	Kind, In  string
	Out       string // plan file to write; "" = the jobs folder beside the journal
	Result    string // result file to write; "" = the jobs folder beside the journal
	SkipBlank bool
	Again     bool
	Apply     bool // plan: send right away
	Max       int
	Confirm   bool // -confirm-production
}

// PlanOrApply is syncer job plan and syncer job apply: plan a file (and send it with -apply, or as apply
// -kind -in), or send what is left of a stored plan.
func (c *CLI) PlanOrApply(ctx context.Context, sub string, pos []string, f PlanFlags) error {
	j, err := OpenJournal(ctx, c.Journal)
	if err != nil {
		return err
	}
	defer j.Close()
	var p *Plan
	switch {
	case len(pos) == 1 && sub == "apply" && f.In == "":
		if p, err = j.LoadPlan(ctx, pos[0]); err != nil {
			return err
		}
	case len(pos) == 0 && f.Kind != "" && f.In != "":
		if p, err = c.plan(ctx, j, f); err != nil {
			return err
		}
	default:
		return c.Usage("syncer job %s: want -kind and -in%s", sub, map[bool]string{true: ", or one PLAN_ID"}[sub == "apply"])
	}
	if sub == "plan" && !f.Apply {
		c.dryRun(p, f)
		return nil
	}
	return c.send(ctx, j, p, f)
}

// dryRun says what a plan that was not sent leaves to do, and the command that does it.
func (c *CLI) dryRun(p *Plan, f PlanFlags) {
	left, unresolved := openActions(p)
	n := p.Counts()
	switch {
	case left > 0:
		fmt.Fprintf(c.Out, "dry run: nothing was sent. To send it: syncer job apply %s\n", p.ID)
	case n.Held > 0 && n.Succeeded+n.Failed+unresolved == 0:
		fmt.Fprintf(c.Out, "nothing to send: every row of plan %s repeats a change billsync already sent or the service already shows (held above). "+
			"To send a row anyway write yes in its repeat column and plan again; to send the whole file again as a new job: "+
			"syncer job plan -kind %s -in %s -again\n", p.ID, p.Kind, f.In)
	case unresolved > 0:
		fmt.Fprintf(c.Out, "nothing to send: %d row(s) of plan %s are unresolved and wait for a person (see syncer job show %s)\n",
			unresolved, p.ID, p.ID)
	default:
		held := ""
		if n.Held > 0 {
			held = fmt.Sprintf(" (%d held row(s) repeat changes sent by other plans)", n.Held)
		}
		fmt.Fprintf(c.Out, "nothing to send: plan %s is fully applied%s. To send the same file again as a new job: "+
			"syncer job plan -kind %s -in %s -again\n", p.ID, held, p.Kind, f.In)
	}
}

func (c *CLI) plan(ctx context.Context, j *Journal, f PlanFlags) (*Plan, error) {
	wh, err := warehouse.OpenReadOnly(ctx, c.Warehouse)
	if err != nil {
		return nil, err
	}
	defer wh.Close()
	p, err := j.Plan(ctx, wh, PlanOptions{Kind: Kind(f.Kind), Input: f.In, Account: c.Account,
		SkipBlank: f.SkipBlank, Again: f.Again, Location: c.Files.Location, Locale: c.Files.Locale, RepeatWindow: c.RepeatWindow,
		User: c.User})
	if err != nil {
		return nil, err
	}
	if p.Existing {
		fmt.Fprintf(c.Out, "this file was planned before as plan %s; its state:\n", p.ID)
	}
	PrintPlan(c.Out, p, 50, c.Files)
	PrintSummary(c.Out, p, c.Files)
	if err := c.writeFiles(j, f.Out, "plan-"+p.ID, PlanTable(p, c.Files)); err != nil {
		return nil, err
	}
	return p, nil
}

func (c *CLI) send(ctx context.Context, j *Journal, p *Plan, f PlanFlags) error {
	client, err := c.Client()
	if err != nil {
		return err
	}
	res, err := j.Apply(ctx, p.ID, ApplyOptions{Client: client, Account: c.Account, BaseURL: c.BaseURL,
		Max: f.Max, Production: c.Production, Confirmed: f.Confirm, Approvals: c.Approvals,
		User: c.User, Log: c.Log, Settle: c.Settle, RepeatWindow: c.RepeatWindow, Location: c.Files.Location, Warehouse: c.Warehouse})
	if errors.Is(err, ErrNeedsConfirmation) {
		return fmt.Errorf("%w: %s is a production base URL (not loopback, and BILLSYNC_ENVIRONMENT is not sandbox); "+
			"review the plan, then run again with -confirm-production", err, c.BaseURL)
	}
	if res != nil {
		PrintResult(c.Out, res, c.Files)
		if res.RunID == 0 {
			fmt.Fprintf(c.Out, "nothing to do: no run recorded and no result file written (syncer job show %s -result FILE writes the plan's outcome)\n", p.ID)
		} else if werr := c.writeResult(ctx, j, res.Plan, res.RunID, f.Result); werr != nil {
			return errors.Join(err, werr)
		}
	}
	if err != nil {
		return err
	}
	return ranOut(p, res)
}

// ranOut is the error a run that left rows to a person, refused or unfinished exits with.
func ranOut(p *Plan, res *RunResult) error {
	if _, waiting := openActions(res.Plan); waiting > 0 {
		return fmt.Errorf("plan %s: %d row(s) unresolved: billsync cannot prove whether they were applied and will not send them again; "+
			"check each on the service and settle it with the syncer job resolve command shown above", p.ID, waiting)
	}
	if res.Failed > 0 || res.Status == RunIncomplete && res.Stopped == "" {
		return fmt.Errorf("plan %s: %d action(s) failed, %d not finished: see the result file", p.ID, res.Failed,
			res.Planned+res.Counts.Sent)
	}
	return nil
}

// writeResult writes the result file of run runID of the plan (0: the plan as it stands), named by the
// run's number among the plan's runs (result-PLAN-run2), not by the journal-wide run id.
func (c *CLI) writeResult(ctx context.Context, j *Journal, p *Plan, runID int64, path string) error {
	var run *Run
	if runID != 0 {
		runs, err := j.Runs(ctx, p.ID)
		if err != nil {
			return err
		}
		for i := range runs {
			if runs[i].ID == runID {
				run = &runs[i]
			}
		}
		if run == nil {
			return fmt.Errorf("plan %s has no run %d in the journal", p.ID, runID)
		}
	}
	base := "result-" + p.ID
	if run != nil {
		base = fmt.Sprintf("result-%s-run%d", p.ID, run.N)
	}
	return c.writeFiles(j, path, base, ResultTable(p, run, c.Files))
}

// writeFiles writes a plan or result table to path, or by default to base.csv and base.xlsx in the jobs
// directory beside the journal: the CSV for programs, the workbook for the reviewer.
func (c *CLI) writeFiles(j *Journal, path, base string, t *Table) error {
	paths := []string{path}
	if path == "" {
		dir := filepath.Join(filepath.Dir(j.Path()), "jobs")
		paths = []string{filepath.Join(dir, base+".csv"), filepath.Join(dir, base+".xlsx")}
	}
	for _, p := range paths {
		if err := WriteTableFile(p, t, c.Files); err != nil {
			return err
		}
	}
	fmt.Fprintf(c.Out, "%s written to %s\n", strings.SplitN(base, "-", 2)[0], strings.Join(paths, " and "))
	return nil
}

// openActions counts the actions a run would still send or reconcile, and those waiting for a person.
func openActions(p *Plan) (left, unresolved int) {
	for _, a := range p.Actions {
		switch a.State {
		case Succeeded, Failed, Held:
		case Unresolved:
			unresolved++
		default:
			left++
		}
	}
	return left, unresolved
}

// ApproveOrShow is syncer job approve and syncer job show: the plan's summary, then its approval, or
// every action's state with its history (and its result file, when result is a path).
func (c *CLI) ApproveOrShow(ctx context.Context, sub, id, result string) error {
	j, err := OpenJournal(ctx, c.Journal)
	if err != nil {
		return err
	}
	defer j.Close()
	p, err := j.LoadPlan(ctx, id)
	if err != nil {
		return err
	}
	o := c.Files
	if sub == "approve" {
		return c.approve(ctx, j, p)
	}
	PrintPlan(c.Out, p, 0, o)
	PrintSummary(c.Out, p, o)
	runs, err := j.Runs(ctx, p.ID)
	if err != nil {
		return err
	}
	res, err := j.Resolutions(ctx, p.ID)
	if err != nil {
		return err
	}
	PrintHistory(c.Out, p, runs, res, o)
	PrintUnresolved(c.Out, p, o)
	if result != "" {
		return c.writeResult(ctx, j, p, 0, result)
	}
	return nil
}

// approve shows what the plan adds up to and the service it is approved for, then records the approval:
// refused for the login that planned it unless BILLSYNC_ALLOW_SELF_APPROVE=true (four eyes).
func (c *CLI) approve(ctx context.Context, j *Journal, p *Plan) error {
	o := c.Files
	if c.BaseURL == "" {
		return cli.Config(errors.New("BILLSYNC_BASE_URL (-base-url) is not set: an approval is for one service, the one the plan will be sent to"))
	}
	prod := c.Production
	if a := p.ApprovalFor(c.BaseURL, prod); a != nil {
		fmt.Fprintf(c.Out, "plan %s is already approved (by %s on %s, for %s); nothing changed\n", p.ID, a.By,
			a.At.In(o.loc()).Format("2006-01-02 15:04 MST"), serviceText(a.BaseURL, a.Production))
		return nil
	}
	var summary strings.Builder
	PrintPlan(&summary, p, 20, o)
	PrintSummary(&summary, p, o)
	fmt.Fprintf(&summary, "  target: account %s at %s\n", p.Account, serviceText(c.BaseURL, prod))
	fmt.Fprint(c.Out, summary.String())
	if left, _ := openActions(p); left == 0 {
		fmt.Fprintf(c.Out, "note: plan %s has nothing left to send\n", p.ID)
	}
	p, err := j.Approve(ctx, p.ID, ApproveOptions{By: c.User, Account: c.Account, BaseURL: c.BaseURL,
		Production: prod, Approvals: c.Approvals, Summary: summary.String()})
	if err != nil {
		return err
	}
	self := ""
	if p.Approval.Self {
		self = " (a self-approval, allowed by BILLSYNC_ALLOW_SELF_APPROVE and journaled as such)"
	}
	fmt.Fprintf(c.Out, "plan %s approved by %s%s for %s: it is sent there, and nowhere else, by `%s`, or by the daemon "+
		"after its next sync when BILLSYNC_APPLY_APPROVED=true\n", p.ID, p.ApprovedBy, self, serviceText(c.BaseURL, prod),
		applyCommand(p.ID, prod))
	return nil
}

// serviceText names a service for the approver: PRODUCTION in capitals.
func serviceText(baseURL string, production bool) string {
	if production {
		return baseURL + " (PRODUCTION)"
	}
	return baseURL + " (not production)"
}

// ResolveRow is syncer job resolve, its arguments checked: settles row of plan planID by a person's word,
// once the service has been read (force: journaled even against what the read shows).
func (c *CLI) ResolveRow(ctx context.Context, planID string, row int, outcome, why string, force bool) error {
	// The service is read first: a resolution its evidence contradicts is refused unless forced.
	o := ResolveOptions{Force: force, Settle: c.Settle, Location: c.Files.Location}
	if client, err := c.Client(); err == nil {
		o.Client = client
	} else if !force {
		return fmt.Errorf("resolve checks the row against the service first: %w (or -force -why \"...\" to journal it unchecked)", err)
	}
	j, err := OpenJournal(ctx, c.Journal)
	if err != nil {
		return err
	}
	defer j.Close()
	a, err := j.Resolve(ctx, planID, row, outcome, c.User, why, o)
	if err != nil {
		return err
	}
	if a.Detail["forced"] == "true" {
		fmt.Fprintf(c.Out, "forced against the service's evidence (journaled as forced): %s%s\n", a.Detail["contradicted"],
			strings.TrimPrefix(a.Detail["evidence"], "not read: "))
	}
	next := "it counts as succeeded; nothing will be sent for it"
	if a.State == NotApplied {
		next = "the next run sends it: syncer job apply " + planID
	}
	fmt.Fprintf(c.Out, "row %d of plan %s (line %d, %s) resolved as %s by %s: %s\n", row, planID, a.Line, a.Target, outcome,
		a.Detail["resolvedBy"], next)
	return nil
}

// List is syncer job list: every plan in the journal, newest first, with its rows by state.
func (c *CLI) List(ctx context.Context) error {
	loc := c.Files.loc()
	j, err := OpenJournal(ctx, c.Journal)
	if err != nil {
		return err
	}
	defer j.Close()
	ps, err := j.Plans(ctx)
	if err != nil {
		return err
	}
	if len(ps) == 0 {
		fmt.Fprintf(c.Out, "no plans in %s yet: plan one with syncer job plan -kind KIND -in FILE\n", j.Path())
		return nil
	}
	tw := tabwriter.NewWriter(c.Out, 2, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "PLAN\tKIND\tACCOUNT\tCREATED\tBY\tACTIONS\tPLANNED\tHELD\tSENT\tSUCCEEDED\tFAILED\tUNRESOLVED\tSKIPPED\tAPPROVED\t\n")
	for _, s := range ps {
		approved := "no"
		if s.Approved {
			approved = "yes"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", s.ID, s.Kind, s.Account,
			s.CreatedAt.In(loc).Format("2006-01-02 15:04 MST"), s.CreatedBy, group(s.Actions), group(s.Planned), group(s.Held),
			group(s.Sent), group(s.Succeeded), group(s.Failed), group(s.Unresolved), group(s.Skipped), approved)
	}
	return tw.Flush()
}

// Products is syncer job products: the credit-usage products a top-up can name, from the warehouse.
func (c *CLI) Products(ctx context.Context) error {
	wh, err := warehouse.OpenReadOnly(ctx, c.Warehouse)
	if err != nil {
		return err
	}
	defer wh.Close()
	ps, err := CreditProducts(ctx, wh, c.Account)
	if err != nil {
		return err
	}
	if len(ps) == 0 {
		fmt.Fprintf(c.Out, "account %s has no credit-usage products in %s (run a sync first?)\n", c.Account, c.Warehouse)
		return nil
	}
	tw := tabwriter.NewWriter(c.Out, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "PRODUCT ID\tNAME\tTYPE\tSTATUS\tCUSTOMERS WITH CREDIT")
	for _, p := range ps {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", p.ID, p.Name, p.Type, p.Status, group(int(p.Customers)))
	}
	return tw.Flush()
}

// group writes a count with the thousands grouped the Indonesian way (12.345), as the finance team reads it.
func group(n int) string {
	s := strconv.Itoa(n)
	if n < 0 {
		return "-" + group(-n)
	}
	var b strings.Builder
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte('.')
		}
		b.WriteRune(r)
	}
	return b.String()
}
