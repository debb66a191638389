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
	"strings"
	"time"

	"github.com/billsync/billsync/internal/api"
	"github.com/billsync/billsync/internal/jobs"
	"github.com/billsync/billsync/internal/warehouse"
	"github.com/sethvargo/go-envconfig"
)

const jobUsage = `usage:
  syncer job plan -kind KIND -in FILE [-skip-blank] [-again] [-out PLAN.csv|.xlsx] [-apply ...]
  syncer job apply PLAN_ID [-max N] [-confirm-production] [-result RESULT.csv|.xlsx]
  syncer job apply -kind KIND -in FILE [...]   (plan and apply in one go)
  syncer job approve PLAN_ID                   (lets the daemon apply it when BILLSYNC_APPLY_APPROVED=true)
  syncer job show PLAN_ID [-result FILE]       (every action's state)
  syncer job list
kinds: email-fix, credit-topup, invoice-create, payment-edit, license-activate, license-deactivate,
       checkout-link, coupon-check (see docs/jobs.md)`

// jobEnv is the job settings beyond the syncer's own.
type jobEnv struct {
	Journal     string `env:"BILLSYNC_JOURNAL"`     // default: billsync-jobs.duckdb beside BILLSYNC_DB
	Environment string `env:"BILLSYNC_ENVIRONMENT"` // "sandbox" marks a non-loopback base URL as not production
}

type jobFlags struct {
	cfg       config
	env       jobEnv
	kind      string
	in        string
	out       string
	result    string
	skipBlank bool
	again     bool
	apply     bool
	max       int
	confirm   bool
}

// jobCommand is "syncer job ...": audited write jobs planned from a spreadsheet and applied exactly once.
func jobCommand(ctx context.Context, args []string, lookup envconfig.Lookuper, stdout io.Writer) error {
	if len(args) == 0 || args[0] == "-h" || args[0] == "help" {
		return errors.New(jobUsage)
	}
	var f jobFlags
	if err := envconfig.ProcessWith(ctx, &envconfig.Config{Target: &f.cfg, Lookuper: lookup}); err != nil {
		return fmt.Errorf("environment: %w", err)
	}
	if err := envconfig.ProcessWith(ctx, &envconfig.Config{Target: &f.env, Lookuper: lookup}); err != nil {
		return fmt.Errorf("environment: %w", err)
	}
	sub := args[0]
	pos, err := f.parse(sub, args[1:])
	if err != nil {
		return err
	}
	if f.env.Journal == "" {
		f.env.Journal = jobs.DefaultJournalPath(f.cfg.DB)
	}
	switch sub {
	case "plan", "apply":
		return f.planOrApply(ctx, sub, pos, stdout)
	case "approve", "show":
		if len(pos) != 1 {
			return fmt.Errorf("job %s: want one PLAN_ID\n%s", sub, jobUsage)
		}
		return f.approveOrShow(ctx, sub, pos[0], stdout)
	case "list":
		return f.list(ctx, stdout)
	}
	return fmt.Errorf("job: unknown command %q\n%s", sub, jobUsage)
}

// parse reads flags anywhere among the arguments ("apply ID -max 3" as well as "apply -max 3 ID").
func (f *jobFlags) parse(sub string, args []string) ([]string, error) {
	fs := flag.NewFlagSet("syncer job "+sub, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVar(&f.cfg.DB, "db", f.cfg.DB, "warehouse file (BILLSYNC_DB)")
	fs.StringVar(&f.env.Journal, "journal", f.env.Journal, "job journal file (BILLSYNC_JOURNAL)")
	fs.StringVar(&f.cfg.Account, "account", f.cfg.Account, "account (BILLSYNC_ACCOUNT)")
	fs.StringVar(&f.cfg.BaseURL, "base-url", f.cfg.BaseURL, "billing service (BILLSYNC_BASE_URL)")
	fs.StringVar(&f.cfg.APIKeyFile, "api-key-file", f.cfg.APIKeyFile, "file holding the API key (BILLSYNC_API_KEY_FILE)")
	fs.StringVar(&f.kind, "kind", "", "job kind")
	fs.StringVar(&f.in, "in", "", "input .csv or .xlsx")
	fs.StringVar(&f.out, "out", "", "plan file to write (.csv or .xlsx)")
	fs.StringVar(&f.result, "result", "", "result file to write (.csv or .xlsx)")
	fs.BoolVar(&f.skipBlank, "skip-blank", false, "email-fix: leave rows with a blank toEmail out")
	fs.BoolVar(&f.again, "again", false, "plan as a new job even if this exact file was planned before")
	fs.BoolVar(&f.apply, "apply", false, "send the plan right away (default: dry run)")
	fs.IntVar(&f.max, "max", 0, "send at most N actions in this run (0 = all)")
	fs.BoolVar(&f.confirm, "confirm-production", false, "required to send to a production base URL")
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, fmt.Errorf("job %s: %w\n%s", sub, err, jobUsage)
		}
		if fs.NArg() == 0 {
			break
		}
		pos = append(pos, fs.Arg(0))
		args = fs.Args()[1:]
	}
	if f.max < 0 {
		return nil, fmt.Errorf("job %s: -max %d: must be 0 (no cap) or positive", sub, f.max)
	}
	return pos, nil
}

func (f *jobFlags) planOrApply(ctx context.Context, sub string, pos []string, stdout io.Writer) error {
	j, err := jobs.OpenJournal(ctx, f.env.Journal)
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
		return fmt.Errorf("job %s: want -kind and -in%s\n%s", sub, map[bool]string{true: ", or a PLAN_ID"}[sub == "apply"], jobUsage)
	}
	if sub == "plan" && !f.apply {
		fmt.Fprintf(stdout, "dry run: nothing was sent. To send it: syncer job apply %s\n", p.ID)
		return nil
	}
	return f.send(ctx, j, p, stdout)
}

func (f *jobFlags) plan(ctx context.Context, j *jobs.Journal, stdout io.Writer) (*jobs.Plan, error) {
	loc, err := time.LoadLocation(f.cfg.TZ)
	if err != nil {
		return nil, fmt.Errorf("BILLSYNC_TZ %q: %w", f.cfg.TZ, err)
	}
	wh, err := warehouse.OpenReadOnly(ctx, f.cfg.DB)
	if err != nil {
		return nil, err
	}
	defer wh.Close()
	p, err := j.Plan(ctx, wh, jobs.PlanOptions{Kind: jobs.Kind(f.kind), Input: f.in, Account: f.cfg.Account,
		SkipBlank: f.skipBlank, Again: f.again, Location: loc})
	if err != nil {
		return nil, err
	}
	if p.Existing {
		fmt.Fprintf(stdout, "this file was planned before as plan %s (use -again for a new job); its state:\n", p.ID)
	}
	jobs.PrintPlan(stdout, p, 50)
	out := f.out
	if out == "" {
		out = filepath.Join(filepath.Dir(j.Path()), "jobs", "plan-"+p.ID+".csv")
	}
	if err := jobs.WriteTableFile(out, "plan", jobs.PlanTable(p)); err != nil {
		return nil, err
	}
	fmt.Fprintf(stdout, "plan written to %s\n", out)
	return p, nil
}

func (f *jobFlags) send(ctx context.Context, j *jobs.Journal, p *jobs.Plan, stdout io.Writer) error {
	if f.cfg.BaseURL == "" {
		return errors.New("BILLSYNC_BASE_URL is not set")
	}
	key, err := readKey(f.cfg.APIKey, f.cfg.APIKeyFile, "BILLSYNC_API_KEY")
	if err != nil {
		return err
	}
	log := newLogger(os.Stderr, f.cfg.LogFormat, isTerminal(os.Stderr))
	c, err := api.New(api.Config{BaseURL: f.cfg.BaseURL, APIKey: key, RatePerMin: f.cfg.RatePerMin,
		Unlimited: f.cfg.RatePerMin == 0, Logger: log})
	if err != nil {
		return err
	}
	res, err := j.Apply(ctx, p.ID, jobs.ApplyOptions{Client: c, Account: f.cfg.Account, BaseURL: f.cfg.BaseURL,
		Max: f.max, Production: isProduction(f.cfg.BaseURL, f.env.Environment), Confirmed: f.confirm, Log: log})
	if errors.Is(err, jobs.ErrNeedsConfirmation) {
		return fmt.Errorf("%w: %s is a production base URL (not loopback, and BILLSYNC_ENVIRONMENT is not sandbox); "+
			"review the plan, then run again with -confirm-production", err, f.cfg.BaseURL)
	}
	if res != nil {
		jobs.PrintResult(stdout, res)
		if werr := f.writeResult(j, res.Plan, res.RunID, stdout); werr != nil {
			return errors.Join(err, werr)
		}
	}
	if err != nil {
		return err
	}
	if res.Failed > 0 || res.Status == jobs.RunIncomplete && res.Stopped == "" {
		return fmt.Errorf("plan %s: %d action(s) failed, %d unresolved: see the result file", p.ID, res.Failed, res.Unresolved)
	}
	return nil
}

func (f *jobFlags) writeResult(j *jobs.Journal, p *jobs.Plan, runID int64, stdout io.Writer) error {
	out := f.result
	if out == "" {
		out = filepath.Join(filepath.Dir(j.Path()), "jobs", fmt.Sprintf("result-%s-run%d.csv", p.ID, runID))
	}
	if err := jobs.WriteTableFile(out, "result", jobs.ResultTable(p)); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "result written to %s\n", out)
	return nil
}

func (f *jobFlags) approveOrShow(ctx context.Context, sub, id string, stdout io.Writer) error {
	j, err := jobs.OpenJournal(ctx, f.env.Journal)
	if err != nil {
		return err
	}
	defer j.Close()
	if sub == "approve" {
		p, err := j.Approve(ctx, id, "")
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "plan %s approved by %s: the daemon applies it after its next sync when BILLSYNC_APPLY_APPROVED=true\n",
			p.ID, p.ApprovedBy)
		return nil
	}
	p, err := j.LoadPlan(ctx, id)
	if err != nil {
		return err
	}
	jobs.PrintPlan(stdout, p, 0)
	if f.result != "" {
		return f.writeResult(j, p, 0, stdout)
	}
	return nil
}

func (f *jobFlags) list(ctx context.Context, stdout io.Writer) error {
	j, err := jobs.OpenJournal(ctx, f.env.Journal)
	if err != nil {
		return err
	}
	defer j.Close()
	ps, err := j.Plans(ctx)
	if err != nil {
		return err
	}
	for _, s := range ps {
		approved := ""
		if s.Approved {
			approved = " approved"
		}
		fmt.Fprintf(stdout, "%s  %-18s %-10s %s  by %-10s %d actions: %d succeeded, %d failed, %d unknown%s\n", s.ID, s.Kind,
			s.Account, s.CreatedAt.UTC().Format("2006-01-02 15:04"), s.CreatedBy, s.Actions, s.Succeeded, s.Failed, s.Unknown, approved)
	}
	return nil
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
