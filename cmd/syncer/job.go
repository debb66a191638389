package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/billsync/billsync/internal/api"
	"github.com/billsync/billsync/internal/cli"
	conf "github.com/billsync/billsync/internal/config"
	"github.com/billsync/billsync/internal/jobs"
	"github.com/billsync/billsync/internal/warehouse"
	"github.com/sethvargo/go-envconfig"
)

var jobUsage = `usage:
  syncer job plan -kind KIND -in FILE [-again] [-out PLAN.csv|.xlsx] [-apply ...]
  syncer job apply PLAN_ID [-max N] [-confirm-production] [-result RESULT.csv|.xlsx]
  syncer job apply -kind KIND -in FILE [...]   (plan and apply in one go)
  syncer job approve PLAN_ID                   (another login approves it: needed to send it to production)
  syncer job resolve PLAN_ID ROW applied|not-applied -why "what you checked" [-force]
                                               (settles an unresolved row by hand, checked against the service)
  syncer job show PLAN_ID [-result FILE]       (every action's state)
  syncer job list                              (every plan, newest first)
  syncer job products                          (the credit-usage products a top-up can name)
  syncer job SUBCOMMAND -h                     (that subcommand's flags)
` + kindsLine(jobs.Kinds()) + " (see docs/jobs.md)"

// kindsLine names every job kind, wrapped under the usage's 100 columns.
func kindsLine(kinds []jobs.Kind) string {
	var b strings.Builder
	line := "kinds:"
	for i, k := range kinds {
		word := " " + string(k)
		if i < len(kinds)-1 {
			word += ","
		}
		if len(line)+len(word) > 100 {
			b.WriteString(line + "\n")
			line = "      "
		}
		line += word
	}
	return b.String() + line
}

// jobConfigFlags are the syncer's options a job reads (declared in internal/config).
var jobConfigFlags = []string{"db", "journal", "account", "base-url", "api-key-file", "environment", "tz", "locale", "currency",
	"repeat-window", "settle"}

// subUsage is each subcommand's synopsis and the flags it reads (besides -db, -journal and -account).
var subUsage = map[string]struct {
	synopsis string
	flags    []string
}{
	"plan": {"syncer job plan -kind KIND -in FILE [flags]: validate a file against the warehouse and store the plan; sends nothing",
		[]string{"kind", "in", "skip-blank", "again", "out", "apply", "max", "confirm-production", "result", "base-url", "api-key-file", "environment", "allow-self-approve", "require-approval", "tz", "locale", "repeat-window", "settle"}},
	"apply": {"syncer job apply PLAN_ID [flags] | syncer job apply -kind KIND -in FILE [flags]: send what is left of a plan, exactly once; to production only after another login approved it (syncer job approve) and with -confirm-production",
		[]string{"max", "confirm-production", "result", "kind", "in", "skip-blank", "again", "out", "base-url", "api-key-file", "environment", "allow-self-approve", "require-approval", "tz", "locale", "repeat-window", "settle"}},
	"approve": {"syncer job approve PLAN_ID: show the plan's summary and approve it for the service of BILLSYNC_BASE_URL: then syncer job apply sends it there (and nowhere else), as does the daemon after its next sync (BILLSYNC_APPLY_APPROVED=true); the approver is the OS login of this process's uid, and the login that planned it may not approve it unless BILLSYNC_ALLOW_SELF_APPROVE=true",
		[]string{"base-url", "environment", "allow-self-approve", "tz", "locale"}},
	"resolve": {"syncer job resolve PLAN_ID ROW applied|not-applied -why TEXT [-force]: settle an unresolved row after checking it on the service; ROW is the plan's SEQ (Baris/Row in the plan file). The service is read first: a resolution its evidence contradicts is refused unless -force",
		[]string{"why", "force", "base-url", "api-key-file", "environment", "settle", "tz"}},
	"show": {"syncer job show PLAN_ID [-result FILE]: print the plan with every action's state, its totals, and who planned, approved, applied and resolved it",
		[]string{"result", "tz", "locale"}},
	"list":     {"syncer job list: every plan in the journal, newest first", []string{"tz"}},
	"products": {"syncer job products: the credit-usage products of the account, with their ids", nil},
}

// login is who runs this command, as the journal records it: the OS account of the process's uid
// (jobs.Login). Tests of the command replace it in the child process (main_test.go) to act as alice or bob.
var login = jobs.Login

type jobFlags struct {
	cfg       config
	approvals conf.Approvals
	kind      string
	in        string
	out       string
	result    string
	skipBlank bool
	again     bool
	apply     bool
	max       int
	confirm   bool
	why, by   string
	force     bool
}

// errUsage marks a command line that cannot be run; main exits 2 for it.
func usageErr(format string, a ...any) error {
	return fmt.Errorf("usage: "+format+"\n\n%s", append(a, strings.TrimPrefix(jobUsage, "usage:\n"))...)
}

func isHelp(a string) bool { return a == "-h" || a == "-help" || a == "--help" || a == "help" }

// jobCommand is "syncer job ...": audited write jobs planned from a spreadsheet and applied exactly once.
func jobCommand(ctx context.Context, args []string, lookup envconfig.Lookuper, stdout io.Writer) error {
	if len(args) == 0 {
		return usageErr("syncer job: a subcommand is required")
	}
	if isHelp(args[0]) {
		fmt.Fprintln(stdout, jobUsage)
		return nil
	}
	sub := args[0]
	if _, ok := subUsage[sub]; !ok {
		return usageErr("syncer job: unknown subcommand %q", sub)
	}
	var f jobFlags
	fs := f.flagSet(sub)
	for _, a := range args[1:] {
		if isHelp(a) {
			f.printHelp(stdout, sub, fs)
			return nil
		}
	}
	if _, err := conf.Load(ctx, &f.cfg, lookup); err != nil {
		return cli.Config(err)
	}
	if _, err := conf.Load(ctx, &f.approvals, lookup); err != nil {
		return cli.Config(err)
	}
	fs = f.flagSet(sub) // defaults from the environment
	pos, err := f.parse(sub, fs, args[1:])
	if err != nil {
		return err
	}
	if f.cfg.Account == "" {
		f.cfg.Account = conf.DefaultAccount
	}
	if f.cfg.Journal == "" {
		f.cfg.Journal = jobs.DefaultJournalPath(f.cfg.DB)
	}
	switch sub {
	case "plan", "apply":
		return f.planOrApply(ctx, sub, pos, stdout)
	case "approve", "show":
		if len(pos) != 1 {
			return usageErr("syncer job %s: want one PLAN_ID, got %d argument(s)", sub, len(pos))
		}
		return f.approveOrShow(ctx, sub, pos[0], stdout)
	case "resolve":
		return f.resolve(ctx, pos, stdout)
	case "list":
		if len(pos) != 0 {
			return usageErr("syncer job list takes no arguments, got %q", strings.Join(pos, " "))
		}
		return f.list(ctx, stdout)
	case "products":
		if len(pos) != 0 {
			return usageErr("syncer job products takes no arguments, got %q", strings.Join(pos, " "))
		}
		return f.products(ctx, stdout)
	}
	return usageErr("syncer job: unknown subcommand %q", sub)
}

func (f *jobFlags) flagSet(sub string) *flag.FlagSet {
	fs := flag.NewFlagSet("syncer job "+sub, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	conf.Bind(fs, &f.cfg, jobConfigFlags...)
	conf.Bind(fs, &f.approvals)
	fs.StringVar(&f.kind, "kind", "", "job kind")
	fs.StringVar(&f.in, "in", "", "input .csv or .xlsx")
	fs.StringVar(&f.out, "out", "", "plan file to write (.csv or .xlsx)")
	fs.StringVar(&f.result, "result", "", "result file to write (.csv or .xlsx)")
	fs.BoolVar(&f.skipBlank, "skip-blank", false, "accepted for old command lines: email-fix always leaves rows with a blank toEmail out")
	fs.BoolVar(&f.again, "again", false, "plan as a new job even if this exact file was planned before, and send every row even if billsync sent the same change before (e.g. next month's top-up)")
	fs.BoolVar(&f.apply, "apply", false, "send the plan right away (default: dry run)")
	fs.IntVar(&f.max, "max", 0, "send at most N actions in this run (0 = all)")
	fs.BoolVar(&f.confirm, "confirm-production", false, "required to send to a production base URL, besides another login's approval")
	fs.StringVar(&f.why, "why", "", "resolve: what you checked on the service (kept in the journal)")
	// Kept so an old command line gets a reason, not "flag provided but not defined": who resolves is the OS login.
	fs.StringVar(&f.by, "by", "", "no longer accepted: a resolution is journaled under the OS login of whoever runs it")
	fs.BoolVar(&f.force, "force", false, "resolve: journal the resolution even though the service's evidence contradicts it (-why says why)")
	return fs
}

// printHelp writes a subcommand's synopsis and its flags to stdout.
func (f *jobFlags) printHelp(w io.Writer, sub string, fs *flag.FlagSet) {
	u := subUsage[sub]
	fmt.Fprintf(w, "usage: %s\n\nflags:\n", u.synopsis)
	show := map[string]bool{"db": true, "journal": true, "account": true}
	for _, n := range u.flags {
		show[n] = true
	}
	fs.VisitAll(func(fl *flag.Flag) {
		if !show[fl.Name] {
			return
		}
		arg, usage := flag.UnquoteUsage(fl)
		if arg != "" {
			arg = " " + arg
		}
		fmt.Fprintf(w, "  -%s%s\n    \t%s\n", fl.Name, arg, usage)
	})
	fmt.Fprintln(w, "\nsee docs/jobs.md")
}

// parse reads flags anywhere among the arguments ("apply ID -max 3" as well as "apply -max 3 ID").
func (f *jobFlags) parse(sub string, fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, usageErr("syncer job %s: %v", sub, err)
		}
		if fs.NArg() == 0 {
			break
		}
		pos = append(pos, fs.Arg(0))
		args = fs.Args()[1:]
	}
	if f.max < 0 {
		return nil, usageErr("syncer job %s: -max %d: must be 0 (no cap) or positive", sub, f.max)
	}
	// The settings, as the daemon checks them: a job that cannot prove what it needs stops here.
	if err := errors.Join(f.cfg.validate(), conf.Check(&f.approvals)); err != nil {
		return nil, cli.Config(err)
	}
	return pos, nil
}

func (f *jobFlags) planOrApply(ctx context.Context, sub string, pos []string, stdout io.Writer) error {
	j, err := jobs.OpenJournal(ctx, f.cfg.Journal)
	if err != nil {
		return err
	}
	defer j.Close()
	var p *jobs.Plan
	switch {
	case len(pos) == 1 && sub == "apply" && f.in == "":
		if p, err = j.LoadPlan(ctx, pos[0]); err != nil {
			return err
		}
	case len(pos) == 0 && f.kind != "" && f.in != "":
		if p, err = f.plan(ctx, j, stdout); err != nil {
			return err
		}
	default:
		return usageErr("syncer job %s: want -kind and -in%s", sub, map[bool]string{true: ", or one PLAN_ID"}[sub == "apply"])
	}
	if sub == "plan" && !f.apply {
		left, unresolved := openActions(p)
		c := p.Counts()
		switch {
		case left > 0:
			fmt.Fprintf(stdout, "dry run: nothing was sent. To send it: syncer job apply %s\n", p.ID)
		case c.Held > 0 && c.Succeeded+c.Failed+unresolved == 0:
			fmt.Fprintf(stdout, "nothing to send: every row of plan %s repeats a change billsync already sent or the service already shows (held above). "+
				"To send a row anyway write yes in its repeat column and plan again; to send the whole file again as a new job: "+
				"syncer job plan -kind %s -in %s -again\n", p.ID, p.Kind, f.in)
		case unresolved > 0:
			fmt.Fprintf(stdout, "nothing to send: %d row(s) of plan %s are unresolved and wait for a person (see syncer job show %s)\n",
				unresolved, p.ID, p.ID)
		default:
			held := ""
			if c.Held > 0 {
				held = fmt.Sprintf(" (%d held row(s) repeat changes sent by other plans)", c.Held)
			}
			fmt.Fprintf(stdout, "nothing to send: plan %s is fully applied%s. To send the same file again as a new job: "+
				"syncer job plan -kind %s -in %s -again\n", p.ID, held, p.Kind, f.in)
		}
		return nil
	}
	return f.send(ctx, j, p, stdout)
}

func (f *jobFlags) plan(ctx context.Context, j *jobs.Journal, stdout io.Writer) (*jobs.Plan, error) {
	loc := f.cfg.TZ.Location()
	wh, err := warehouse.OpenReadOnly(ctx, f.cfg.DB)
	if err != nil {
		return nil, err
	}
	defer wh.Close()
	p, err := j.Plan(ctx, wh, jobs.PlanOptions{Kind: jobs.Kind(f.kind), Input: f.in, Account: f.cfg.Account,
		SkipBlank: f.skipBlank, Again: f.again, Location: loc, Locale: f.cfg.Locale, RepeatWindow: f.cfg.RepeatWindow,
		User: login()})
	if err != nil {
		return nil, err
	}
	if p.Existing {
		fmt.Fprintf(stdout, "this file was planned before as plan %s; its state:\n", p.ID)
	}
	o := f.fileOptions()
	jobs.PrintPlan(stdout, p, 50, o)
	jobs.PrintSummary(stdout, p, o)
	if err := f.writeFiles(j, f.out, "plan-"+p.ID, jobs.PlanTable(p, o), stdout); err != nil {
		return nil, err
	}
	return p, nil
}

func (f *jobFlags) send(ctx context.Context, j *jobs.Journal, p *jobs.Plan, stdout io.Writer) error {
	c, err := f.client()
	if err != nil {
		return err
	}
	log := newLogger(os.Stderr, f.cfg.LogFormat, f.cfg.TZ.Location(), isTerminal(os.Stderr), false)
	loc := f.cfg.TZ.Location()
	res, err := j.Apply(ctx, p.ID, jobs.ApplyOptions{Client: c, Account: f.cfg.Account, BaseURL: f.cfg.BaseURL,
		Max: f.max, Production: isProduction(f.cfg.BaseURL, f.cfg.Environment), Confirmed: f.confirm, Approvals: f.approvals,
		User: login(), Log: log, Settle: f.cfg.JobSettle, RepeatWindow: f.cfg.RepeatWindow, Location: loc, Warehouse: f.cfg.DB})
	if errors.Is(err, jobs.ErrNeedsConfirmation) {
		return fmt.Errorf("%w: %s is a production base URL (not loopback, and BILLSYNC_ENVIRONMENT is not sandbox); "+
			"review the plan, then run again with -confirm-production", err, f.cfg.BaseURL)
	}
	if res != nil {
		jobs.PrintResult(stdout, res, f.fileOptions())
		if res.RunID == 0 {
			fmt.Fprintf(stdout, "nothing to do: no run recorded and no result file written (syncer job show %s -result FILE writes the plan's outcome)\n", p.ID)
		} else if werr := f.writeResult(ctx, j, res.Plan, res.RunID, stdout); werr != nil {
			return errors.Join(err, werr)
		}
	}
	if err != nil {
		return err
	}
	if _, waiting := openActions(res.Plan); waiting > 0 {
		return fmt.Errorf("plan %s: %d row(s) unresolved: billsync cannot prove whether they were applied and will not send them again; "+
			"check each on the service and settle it with the syncer job resolve command shown above", p.ID, waiting)
	}
	if res.Failed > 0 || res.Status == jobs.RunIncomplete && res.Stopped == "" {
		return fmt.Errorf("plan %s: %d action(s) failed, %d not finished: see the result file", p.ID, res.Failed,
			res.Planned+res.Counts.Sent)
	}
	return nil
}

// writeResult writes the result file of run runID of the plan (0: the plan as it stands), named by the
// run's number among the plan's runs (result-PLAN-run2), not by the journal-wide run id.
func (f *jobFlags) writeResult(ctx context.Context, j *jobs.Journal, p *jobs.Plan, runID int64, stdout io.Writer) error {
	var run *jobs.Run
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
	return f.writeFiles(j, f.result, base, jobs.ResultTable(p, run, f.fileOptions()), stdout)
}

// writeFiles writes a plan or result table to path, or by default to base.csv and base.xlsx in the jobs
// directory beside the journal: the CSV for programs, the workbook for the reviewer.
func (f *jobFlags) writeFiles(j *jobs.Journal, path, base string, t *jobs.Table, stdout io.Writer) error {
	paths := []string{path}
	if path == "" {
		dir := filepath.Join(filepath.Dir(j.Path()), "jobs")
		paths = []string{filepath.Join(dir, base+".csv"), filepath.Join(dir, base+".xlsx")}
	}
	for _, p := range paths {
		if err := jobs.WriteTableFile(p, t, f.fileOptions()); err != nil {
			return err
		}
	}
	fmt.Fprintf(stdout, "%s written to %s\n", strings.SplitN(base, "-", 2)[0], strings.Join(paths, " and "))
	return nil
}

// fileOptions are the locale, zone and currency of what a job prints and writes.
func (f *jobFlags) fileOptions() jobs.FileOptions {
	return jobs.FileOptions{Locale: f.cfg.Locale, Location: f.cfg.TZ.Location(), Currency: f.cfg.Currency}
}

// openActions counts the actions a run would still send or reconcile, and those waiting for a person.
func openActions(p *jobs.Plan) (left, unresolved int) {
	for _, a := range p.Actions {
		switch a.State {
		case jobs.Succeeded, jobs.Failed, jobs.Held:
		case jobs.Unresolved:
			unresolved++
		default:
			left++
		}
	}
	return left, unresolved
}

func (f *jobFlags) approveOrShow(ctx context.Context, sub, id string, stdout io.Writer) error {
	j, err := jobs.OpenJournal(ctx, f.cfg.Journal)
	if err != nil {
		return err
	}
	defer j.Close()
	p, err := j.LoadPlan(ctx, id)
	if err != nil {
		return err
	}
	o := f.fileOptions()
	if sub == "approve" {
		return f.approve(ctx, j, p, stdout)
	}
	jobs.PrintPlan(stdout, p, 0, o)
	jobs.PrintSummary(stdout, p, o)
	runs, err := j.Runs(ctx, p.ID)
	if err != nil {
		return err
	}
	res, err := j.Resolutions(ctx, p.ID)
	if err != nil {
		return err
	}
	jobs.PrintHistory(stdout, p, runs, res, o)
	jobs.PrintUnresolved(stdout, p, o)
	if f.result != "" {
		return f.writeResult(ctx, j, p, 0, stdout)
	}
	return nil
}

// approve shows what the plan adds up to and the service it is approved for, then records the approval:
// refused for the login that planned it unless BILLSYNC_ALLOW_SELF_APPROVE=true (four eyes).
func (f *jobFlags) approve(ctx context.Context, j *jobs.Journal, p *jobs.Plan, stdout io.Writer) error {
	o := f.fileOptions()
	if f.cfg.BaseURL == "" {
		return cli.Config(errors.New("BILLSYNC_BASE_URL (-base-url) is not set: an approval is for one service, the one the plan will be sent to"))
	}
	prod := isProduction(f.cfg.BaseURL, f.cfg.Environment)
	if a := p.ApprovalFor(f.cfg.BaseURL, prod); a != nil {
		fmt.Fprintf(stdout, "plan %s is already approved (by %s on %s, for %s); nothing changed\n", p.ID, a.By,
			f.localTime(a.At), targetText(a.BaseURL, a.Production))
		return nil
	}
	var summary strings.Builder
	jobs.PrintPlan(&summary, p, 20, o)
	jobs.PrintSummary(&summary, p, o)
	fmt.Fprintf(&summary, "  target: account %s at %s\n", p.Account, targetText(f.cfg.BaseURL, prod))
	fmt.Fprint(stdout, summary.String())
	if left, _ := openActions(p); left == 0 {
		fmt.Fprintf(stdout, "note: plan %s has nothing left to send\n", p.ID)
	}
	p, err := j.Approve(ctx, p.ID, jobs.ApproveOptions{By: login(), Account: f.cfg.Account, BaseURL: f.cfg.BaseURL,
		Production: prod, Approvals: f.approvals, Summary: summary.String()})
	if err != nil {
		return err
	}
	self := ""
	if p.Approval.Self {
		self = " (a self-approval, allowed by BILLSYNC_ALLOW_SELF_APPROVE and journaled as such)"
	}
	send := "syncer job apply " + p.ID
	if prod {
		send += " -confirm-production"
	}
	fmt.Fprintf(stdout, "plan %s approved by %s%s for %s: it is sent there, and nowhere else, by `%s`, or by the daemon "+
		"after its next sync when BILLSYNC_APPLY_APPROVED=true\n", p.ID, p.ApprovedBy, self, targetText(f.cfg.BaseURL, prod), send)
	return nil
}

func targetText(baseURL string, production bool) string {
	if production {
		return baseURL + " (PRODUCTION)"
	}
	return baseURL + " (not production)"
}

// resolve settles an unresolved row by a person's word.
func (f *jobFlags) resolve(ctx context.Context, pos []string, stdout io.Writer) error {
	if len(pos) != 3 {
		return usageErr("syncer job resolve: want PLAN_ID ROW applied|not-applied, got %d argument(s)", len(pos))
	}
	row, err := strconv.Atoi(pos[1])
	if err != nil || row < 1 {
		return usageErr("syncer job resolve: ROW %q: want the row number (SEQ in syncer job show, Baris/Row in the plan file)", pos[1])
	}
	if pos[2] != jobs.ResolvedApplied && pos[2] != jobs.ResolvedNotApplied {
		return usageErr("syncer job resolve: %q: want applied or not-applied", pos[2])
	}
	if f.by != "" {
		return usageErr("syncer job resolve: -by %q: a resolution is journaled under the OS login of whoever runs it "+
			"(%s here), never a name given on the command line; the person who checked the row runs the command", f.by, login())
	}
	if strings.TrimSpace(f.why) == "" {
		return usageErr("syncer job resolve: -why is required: say what you checked on the service (it is kept in the journal)")
	}
	// The service is read first: a resolution its evidence contradicts is refused unless forced.
	o := jobs.ResolveOptions{Force: f.force, Settle: f.cfg.JobSettle, Location: f.fileOptions().Location}
	if c, err := f.client(); err == nil {
		o.Client = c
	} else if !f.force {
		return fmt.Errorf("resolve checks the row against the service first: %w (or -force -why \"...\" to journal it unchecked)", err)
	}
	j, err := jobs.OpenJournal(ctx, f.cfg.Journal)
	if err != nil {
		return err
	}
	defer j.Close()
	a, err := j.Resolve(ctx, pos[0], row, pos[2], login(), f.why, o)
	if err != nil {
		return err
	}
	if a.Detail["forced"] == "true" {
		fmt.Fprintf(stdout, "forced against the service's evidence (journaled as forced): %s%s\n", a.Detail["contradicted"],
			strings.TrimPrefix(a.Detail["evidence"], "not read: "))
	}
	next := "it counts as succeeded; nothing will be sent for it"
	if a.State == jobs.NotApplied {
		next = "the next run sends it: syncer job apply " + pos[0]
	}
	fmt.Fprintf(stdout, "row %d of plan %s (line %d, %s) resolved as %s by %s: %s\n", row, pos[0], a.Line, a.Target, pos[2],
		a.Detail["resolvedBy"], next)
	return nil
}

// client is the API client of the configured service, unpaced when BILLSYNC_RATE_PER_MIN is 0.
// A missing service or key is a configuration error (exit 2).
func (f *jobFlags) client() (*api.Client, error) {
	if f.cfg.BaseURL == "" {
		return nil, cli.Config(errors.New("BILLSYNC_BASE_URL (-base-url) is not set: the billing service's scheme and host"))
	}
	key, err := readKey(f.cfg.APIKey, f.cfg.APIKeyFile)
	if err != nil {
		return nil, cli.Config(err)
	}
	return api.New(api.Config{BaseURL: f.cfg.BaseURL, APIKey: key, RatePerMin: f.cfg.RatePerMin, Unlimited: f.cfg.RatePerMin == 0,
		Logger: newLogger(os.Stderr, f.cfg.LogFormat, f.cfg.TZ.Location(), isTerminal(os.Stderr), false)})
}

// localTime shows a time in the configured zone (BILLSYNC_TZ, read and checked with the
// settings: never another zone in its place), as the finance team reads it.
func (f *jobFlags) localTime(t time.Time) string {
	return t.In(f.cfg.TZ.Location()).Format("2006-01-02 15:04 MST")
}

func (f *jobFlags) list(ctx context.Context, stdout io.Writer) error {
	loc := f.cfg.TZ.Location()
	j, err := jobs.OpenJournal(ctx, f.cfg.Journal)
	if err != nil {
		return err
	}
	defer j.Close()
	ps, err := j.Plans(ctx)
	if err != nil {
		return err
	}
	if len(ps) == 0 {
		fmt.Fprintf(stdout, "no plans in %s yet: plan one with syncer job plan -kind KIND -in FILE\n", j.Path())
		return nil
	}
	tw := tabwriter.NewWriter(stdout, 2, 4, 2, ' ', 0)
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

// products lists the credit-usage products a top-up can name, from the warehouse.
func (f *jobFlags) products(ctx context.Context, stdout io.Writer) error {
	wh, err := warehouse.OpenReadOnly(ctx, f.cfg.DB)
	if err != nil {
		return err
	}
	defer wh.Close()
	ps, err := jobs.CreditProducts(ctx, wh, f.cfg.Account)
	if err != nil {
		return err
	}
	if len(ps) == 0 {
		fmt.Fprintf(stdout, "account %s has no credit-usage products in %s (run a sync first?)\n", f.cfg.Account, f.cfg.DB)
		return nil
	}
	tw := tabwriter.NewWriter(stdout, 2, 4, 2, ' ', 0)
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

// isProduction: any base URL that is not loopback, unless BILLSYNC_ENVIRONMENT=sandbox says otherwise.
func isProduction(baseURL, environment string) bool {
	if strings.EqualFold(strings.TrimSpace(environment), "sandbox") {
		return false
	}
	u, err := url.Parse(baseURL)
	if err != nil {
		return true
	}
	host := u.Hostname()
	if strings.EqualFold(host, "localhost") {
		return false
	}
	ip := net.ParseIP(host)
	return ip == nil || !ip.IsLoopback()
}
