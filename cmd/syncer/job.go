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
	"strconv"
	"strings"

	"github.com/billsync/billsync/internal/api"
	"github.com/billsync/billsync/internal/cli"
	conf "github.com/billsync/billsync/internal/config"
	"github.com/billsync/billsync/internal/jobs"
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

// jobCommand is "syncer job ...": audited write jobs planned from a spreadsheet and applied exactly once. It
// parses the command line and the settings; the subcommands are internal/jobs' (jobs.CLI).
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
	c := f.cli(stdout)
	switch sub {
	case "plan", "apply":
		return c.PlanOrApply(ctx, sub, pos, jobs.PlanFlags{Kind: f.kind, In: f.in, Out: f.out, Result: f.result,
			SkipBlank: f.skipBlank, Again: f.again, Apply: f.apply, Max: f.max, Confirm: f.confirm})
	case "approve", "show":
		if len(pos) != 1 {
			return usageErr("syncer job %s: want one PLAN_ID, got %d argument(s)", sub, len(pos))
		}
		return c.ApproveOrShow(ctx, sub, pos[0], f.result)
	case "resolve":
		return f.resolve(ctx, c, pos)
	case "list":
		if len(pos) != 0 {
			return usageErr("syncer job list takes no arguments, got %q", strings.Join(pos, " "))
		}
		return c.List(ctx)
	case "products":
		if len(pos) != 0 {
			return usageErr("syncer job products takes no arguments, got %q", strings.Join(pos, " "))
		}
		return c.Products(ctx)
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

// cli is the jobs' command line over these settings and flags.
func (f *jobFlags) cli(stdout io.Writer) *jobs.CLI {
	return &jobs.CLI{Journal: f.cfg.Journal, Warehouse: f.cfg.DB, Account: f.cfg.Account, BaseURL: f.cfg.BaseURL,
		Production: isProduction(f.cfg.BaseURL, f.cfg.Environment), Approvals: f.approvals, Settle: f.cfg.JobSettle,
		RepeatWindow: f.cfg.RepeatWindow,
		Files:        jobs.FileOptions{Locale: f.cfg.Locale, Location: f.cfg.TZ.Location(), Currency: f.cfg.Currency},
		User:         login(), Client: f.client, Usage: usageErr, Out: stdout,
		Log: newLogger(os.Stderr, f.cfg.LogFormat, f.cfg.TZ.Location(), isTerminal(os.Stderr), false)}
}

// resolve checks resolve's arguments and settles the row.
func (f *jobFlags) resolve(ctx context.Context, c *jobs.CLI, pos []string) error {
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
	return c.ResolveRow(ctx, pos[0], row, pos[2], f.why, f.force)
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
