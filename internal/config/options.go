package config

import (
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"time"
)

// The options, each declared once: env is the variable and its default (go-envconfig's tag),
// flag the flag's name (none: environment only), help the flag's text, which Bind ends with the
// variable's name. Commands embed the groups they read; docs/configuration.md's and
// docs/reports.md's configuration tables list the same, and README.md's the essential ones
// (TestDocsTables).

// Files are billsync's files.
type Files struct {
	DB      string `env:"BILLSYNC_DB, default=./data/billsync.duckdb" flag:"db" help:"the published warehouse file (report opens it read-only)"`
	Journal string `env:"BILLSYNC_JOURNAL" flag:"journal" help:"the write-job journal (default billsync-jobs.duckdb beside the warehouse)"`
}

// Scope is the one account a command works on.
type Scope struct {
	Account string `env:"BILLSYNC_ACCOUNT" flag:"account" help:"the account: a sync tags its rows with this name (default \"default\"), jobs work on it, report reads only its rows (default all accounts)"`
}

// DefaultAccount is the account a sync and a job work on when BILLSYNC_ACCOUNT is not set
// (report reads every account then).
const DefaultAccount = "default"

// ReportAccountAlias is the account's variable report read before it read BILLSYNC_ACCOUNT; it
// is still accepted there, with a warning. The syncer never read it, so only report does.
var ReportAccountAlias = Alias{Old: "BILLSYNC_REPORT_ACCOUNT", New: "BILLSYNC_ACCOUNT"}

// Service is how the billing service is reached.
type Service struct {
	// The key is never a flag: flags show in ps.
	APIKey      string `env:"BILLSYNC_API_KEY"`
	APIKeyFile  string `env:"BILLSYNC_API_KEY_FILE" check:"keyfile" flag:"api-key-file" help:"file holding the API key; the key itself is never a flag"`
	BaseURL     string `env:"BILLSYNC_BASE_URL" check:"url" flag:"base-url" help:"scheme and host of the billing service"`
	Accounts    string `env:"BILLSYNC_ACCOUNTS" check:"accounts" flag:"accounts" help:"several accounts into one warehouse: name=base-url,... with keys from BILLSYNC_API_KEY_<NAME> or BILLSYNC_API_KEY_FILE_<NAME>"`
	Environment string `env:"BILLSYNC_ENVIRONMENT" check:"oneof sandbox production" flag:"environment" help:"sandbox marks a non-loopback base URL as not production for jobs; production (or unset) leaves it production"`
}

// Sync is how the syncer syncs and what it does after a sync.
type Sync struct {
	Schedule   string  `env:"BILLSYNC_SCHEDULE, default=0 2 * * *" check:"cron" flag:"schedule" help:"cron spec of the daemon"`
	RatePerMin float64 `env:"BILLSYNC_RATE_PER_MIN, default=20" zero:"off" flag:"rate" help:"client-side request limit per minute; the real service allows about 20; 0 = off, for a local simulator"`
	Fetch
	Build
	Lake
	MetricsAddr string        `env:"BILLSYNC_METRICS_ADDR" check:"addr" flag:"metrics-addr" help:"serve Prometheus metrics on this address"`
	LogFormat   string        `env:"BILLSYNC_LOG_FORMAT, default=auto" check:"oneof auto json text" flag:"log-format" help:"auto, json or text"`
	StopGrace   time.Duration `env:"BILLSYNC_STOP_GRACE, default=30s" zero:"cancel at once" flag:"stop-grace" help:"how long a stop waits for a running sync before cancelling it; 0 = cancel at once"`
	// Reports names the reports to write after each successful sync: "all", or a comma-separated
	// list (report -list); empty writes none.
	Reports       string `env:"BILLSYNC_REPORTS" check:"reports" flag:"reports" help:"reports to write after each successful sync: \"all\" or names"`
	ApplyApproved bool   `env:"BILLSYNC_APPLY_APPROVED, default=false" flag:"apply-approved" help:"after each successful sync, send the job plans approved with syncer job approve"`
}

// Fetch is how a sync reads the billing service; internal/fetch takes it as it is, so a new
// setting of the reading is a field here and its use there. fetch reads a zero page size,
// concurrency, credit refresh or clock skew as the default declared here; a caller without an
// environment (a test, a benchmark) starts from Defaults[Fetch]().
type Fetch struct {
	Concurrency int `env:"BILLSYNC_CONCURRENCY, default=4" flag:"concurrency" help:"requests in flight"`
	// PageSize is only asked for: the size the server applies is what the pager trusts.
	PageSize    int           `env:"BILLSYNC_PAGE_SIZE, default=100" flag:"page-size" help:"requested page size"`
	MaxRequests int64         `env:"BILLSYNC_MAX_REQUESTS, default=0" zero:"none" flag:"max-requests" help:"request budget of the fan-outs per run, 0 = none"`
	MaxDuration time.Duration `env:"BILLSYNC_MAX_DURATION, default=0" zero:"none" flag:"max-duration" help:"time budget of the fan-outs per run, 0 = none"`
	// CreditRefresh holds even without any sign of credit: a top-up can arrive with no other
	// visible trace.
	CreditRefresh time.Duration `env:"BILLSYNC_CREDIT_REFRESH, default=168h" flag:"credit-refresh" help:"re-read every customer's credit history at least this often"`
	// Details reads, within the budget, the detail endpoint of products and payment requests
	// not yet detailed (userId, qty).
	Details bool `env:"BILLSYNC_DETAILS, default=true" flag:"details" help:"fetch product and payment-request details"`
	// MaxClockSkew bounds the service's clock (its Date header) against this machine's; beyond
	// it a run stores this machine's times and says so (internal/fetch/clock.go). A simulator
	// whose clock is simulated (the demo, tests) needs it raised past the simulated offset.
	MaxClockSkew time.Duration `env:"BILLSYNC_MAX_CLOCK_SKEW, default=5m" flag:"max-clock-skew" help:"how far the billing service's clock may be from this machine's for a sync to store the service's times; beyond it the machine's are stored, with a warning"`
}

// Check says which of f's settings no sync can run with.
func (f Fetch) Check() error {
	var errs []error
	if f.PageSize < 1 {
		errs = append(errs, fmt.Errorf("page size %d: must be at least 1", f.PageSize))
	}
	if f.Concurrency < 1 {
		errs = append(errs, fmt.Errorf("concurrency %d: must be at least 1", f.Concurrency))
	}
	return errors.Join(errs...)
}

// Build is how a sync writes its build of the warehouse (internal/syncrun, internal/warehouse).
type Build struct {
	// MemoryLimit bounds DuckDB's buffer pool on the build file. Staging and merge intermediates
	// beyond it spill to the build's .tmp directory instead of growing the process. The default
	// is chosen so a first sync of ~2M records stays within a 400 MB container: the process adds
	// to it Go's heap, the binary's pages and C memory DuckDB does not track
	// (docs/performance.md). The price is spilling, which costs the list phase CPU.
	MemoryLimit string `env:"BILLSYNC_MEMORY_LIMIT, default=160MB" check:"size" flag:"memory-limit" help:"DuckDB's memory limit while a sync builds the warehouse, e.g. 256MB"`
}

// DefaultMemoryLimit is the build's memory limit unless BILLSYNC_MEMORY_LIMIT says otherwise:
// the default of Build.MemoryLimit, for a build started without one (tests).
var DefaultMemoryLimit = defaultOf(Build{}, "MemoryLimit")

// Check says which of b's settings no build can run with.
func (b Build) Check() error {
	if err := checkSize(b.MemoryLimit); err != nil {
		return fmt.Errorf("memory limit %q: %w", b.MemoryLimit, err)
	}
	return nil
}

// Lake is the Apache Iceberg lake each successful sync commits its accounts' rows to
// (internal/lake, docs/lake.md). Empty Root: no lake.
type Lake struct {
	LakeAccess
	// Maintenance (internal/lake Maintain): the daemon's schedule of it, and what it keeps.
	Maintain string        `env:"BILLSYNC_LAKE_MAINTAIN, default=30 4 * * *" check:"cron" flag:"lake-maintain" help:"cron spec of the daemon's lake maintenance (compaction, month-end tags, snapshot expiry, orphan files); off = none (a fleet sharing tables lets one syncer do it)"`
	Keep     time.Duration `env:"BILLSYNC_LAKE_KEEP, default=840h" flag:"lake-keep" help:"lake maintenance keeps every snapshot younger than this (35 days); older ones expire, except each month's end, tagged month-end-YYYY-MM and kept"`
}

// LakeAccess is where the lake is and how its catalog is reached: what a syncer commits through
// and report -lake reads through (report reads only these).
type LakeAccess struct {
	Root string `env:"BILLSYNC_LAKE" flag:"lake" help:"the Iceberg lake each successful sync commits to and report -lake reads: file:///abs/path or s3://bucket/prefix; empty = none"`
	// The S3 credentials and region are the AWS SDK's own variables (AWS_ACCESS_KEY_ID,
	// AWS_SECRET_ACCESS_KEY, AWS_REGION), never flags.
	S3Endpoint string `env:"BILLSYNC_LAKE_S3_ENDPOINT" flag:"lake-s3-endpoint" help:"endpoint of an S3-compatible store for an s3:// lake (MinIO, R2...); empty = AWS"`
	Catalog    string `env:"BILLSYNC_LAKE_CATALOG" flag:"lake-catalog" help:"the lake's Iceberg catalog: sqlite:///abs/path/catalog.db, postgres://... or http(s)://... (REST)"`
	Namespace  string `env:"BILLSYNC_LAKE_NAMESPACE, default=billsync" flag:"lake-namespace" help:"the catalog namespace of the lake's tables"`
}

// LakeMaintainOff is BILLSYNC_LAKE_MAINTAIN's word for no scheduled maintenance.
const LakeMaintainOff = "off"

// Check says which of l's settings no lake can be opened with: a lake needs a catalog, each of
// a scheme billsync knows.
func (l LakeAccess) Check() error {
	if l.Root == "" {
		if l.Catalog != "" {
			return errors.New("BILLSYNC_LAKE_CATALOG is set but BILLSYNC_LAKE is not: set the lake's root too (file:///abs/path or s3://bucket/prefix)")
		}
		return nil
	}
	var errs []error
	switch {
	case strings.HasPrefix(l.Root, "file:///"), strings.HasPrefix(l.Root, "s3://") && len(l.Root) > len("s3://"):
	default:
		errs = append(errs, fmt.Errorf("BILLSYNC_LAKE %q: want file:///abs/path or s3://bucket/prefix", l.Root))
	}
	switch {
	case l.Catalog == "":
		errs = append(errs, errors.New("BILLSYNC_LAKE is set but BILLSYNC_LAKE_CATALOG is not: want sqlite:///abs/path/catalog.db, postgres://… or http(s)://… (REST)"))
	case strings.HasPrefix(l.Catalog, "sqlite:///"), strings.HasPrefix(l.Catalog, "postgres://"), strings.HasPrefix(l.Catalog, "postgresql://"),
		strings.HasPrefix(l.Catalog, "http://"), strings.HasPrefix(l.Catalog, "https://"):
	default:
		errs = append(errs, fmt.Errorf("BILLSYNC_LAKE_CATALOG %q: want sqlite:///abs/path/catalog.db, postgres://… or http(s)://… (REST)", redactURL(l.Catalog)))
	}
	if !identRE.MatchString(l.Namespace) {
		errs = append(errs, fmt.Errorf("BILLSYNC_LAKE_NAMESPACE %q: want lower_snake_case", l.Namespace))
	}
	return errors.Join(errs...)
}

// identRE is a namespace any engine reads unquoted.
var identRE = regexp.MustCompile(`^[a-z][a-z0-9_]*$`)

// redactURL drops a URL's password: a catalog DSN may carry one, and errors get logged.
func redactURL(s string) string {
	u, err := url.Parse(s)
	if err != nil || u.User == nil {
		return s
	}
	return u.Redacted()
}

// Report is how reports are made.
type Report struct {
	TZ         Zone   `env:"BILLSYNC_TZ, default=Asia/Jakarta" check:"zone" flag:"tz" help:"time zone (IANA name) of the schedule and of report dates and day boundaries"`
	Currency   string `env:"BILLSYNC_CURRENCY, default=IDR" check:"currency" flag:"currency" help:"currency code printed on amounts; formatting only, amounts are never converted"`
	Locale     string `env:"BILLSYNC_LOCALE, default=id" check:"locale" flag:"locale" help:"language of the reports: id or en"`
	CSVDialect string `env:"BILLSYNC_CSV_DIALECT, default=rfc" check:"dialect" flag:"csv-dialect" help:"CSV files: rfc (commas, ISO 8601 times; for programs) or id (semicolons, decimal commas; for a spreadsheet with Indonesian settings)"`
	ReportsOut string `env:"BILLSYNC_REPORTS_OUT, default=./out" flag:"reports-out" help:"directory the reports are written to"`
	// An analyst's SQL (report -sql) reads files only in the warehouse's folder and ReportsOut and
	// writes them only in ReportsOut; these folders widen both, explicitly (docs/warehouse.md).
	SQLFiles string `env:"BILLSYNC_SQL_FILES" flag:"sql-files" help:"more folders an analyst's ad-hoc SQL may read files in and COPY into, separated by ':' like PATH; unset = only the warehouse's folder (read) and the reports' folder (read and write)"`
}

// DefaultTZ is the zone of schedules, dates and day boundaries unless BILLSYNC_TZ says
// otherwise: the default of Report.TZ.
var DefaultTZ = defaultOf(Report{}, "TZ")

// DefaultLocale is the language of reports and messages unless BILLSYNC_LOCALE, or a delivery's
// locale, says otherwise: the default of Report.Locale.
var DefaultLocale = defaultOf(Report{}, "Locale")

// Delivery is how reports reach people by e-mail (docs/delivery.md).
type Delivery struct {
	Deliveries string `env:"BILLSYNC_DELIVERIES" check:"file" flag:"deliveries" help:"the schedule file of e-mail deliveries (YAML, docs/delivery.md); unset = none"`
	SMTPURL    string `env:"BILLSYNC_SMTP_URL" check:"smtp" flag:"smtp-url" help:"smtp://USER@HOST:587 (STARTTLS) or smtps://USER@HOST:465 (implicit TLS); unset = .eml files in the outbox"`
	// An office relay on port 25 often speaks no TLS at all: none says so on purpose.
	SMTPTLS string `env:"BILLSYNC_SMTP_TLS" check:"oneof starttls tls none" flag:"smtp-tls" help:"starttls, tls or none; unset = the URL's scheme decides (smtp:// starttls, smtps:// tls); none (smtp:// only) sends without TLS, to a relay inside the network"`
	// The password is never a flag (flags show in ps) nor a variable: a file, like the API key.
	SMTPPasswordFile string        `env:"BILLSYNC_SMTP_PASSWORD_FILE" check:"file" flag:"smtp-password-file" help:"file holding the SMTP password"`
	MailFrom         string        `env:"BILLSYNC_MAIL_FROM, default=billsync@localhost" check:"email" flag:"mail-from" help:"sender address of deliveries and alerts"`
	AlertsTo         string        `env:"BILLSYNC_ALERTS_TO" check:"emails" flag:"alerts-to" help:"operators' addresses, comma-separated, for alerts about syncs and deliveries"`
	AlertNoSync      time.Duration `env:"BILLSYNC_ALERT_NO_SYNC, default=26h" zero:"never" flag:"alert-no-sync" help:"the daemon alerts the operators when no sync succeeded for this long; 0 = never"`
	AlertDQMin       int           `env:"BILLSYNC_ALERT_DQ_MIN, default=1" zero:"never" flag:"alert-dq-min" help:"the daemon alerts the operators while the data-quality report lists at least this many exceptions (e-mail fixes, conflicting duplicates); 0 = never"`
	Outbox           string        `env:"BILLSYNC_OUTBOX, default=./out/outbox" flag:"outbox" help:"where messages go as .eml files without BILLSYNC_SMTP_URL, and with -dry-run"`
}

// Jobs is how write jobs (syncer job, and the daemon's -apply-approved) compare rows with what was
// sent before, and judge a read of a write whose answer was lost.
type Jobs struct {
	RepeatWindow time.Duration `env:"BILLSYNC_JOB_REPEAT_WINDOW, default=840h" flag:"repeat-window" help:"a job row that makes a change billsync sent within this window (from any plan), or that the service's records show in it, is held unless marked repeat=yes or planned with -again"`
	JobSettle    time.Duration `env:"BILLSYNC_JOB_SETTLE, default=5m" flag:"settle" help:"write jobs: how long after a send a read that does not find the change is not yet proof it is absent (the service may show it late)"`
}

// Approvals is who may approve a write job (syncer job approve) and which sends need an approval: the
// daemon never approves, and both it and syncer job apply read these.
type Approvals struct {
	// Four eyes: whoever planned a job may not approve it, unless a team of one says so; a self-approval
	// lets a plan be sent only while this is still true.
	AllowSelfApprove bool `env:"BILLSYNC_ALLOW_SELF_APPROVE, default=false" flag:"allow-self-approve" help:"let the login that planned a job approve it too, for a team of one (journaled as a self-approval); a self-approved plan is sent only while this is true"`
	// Production always needs an approval by another login; this extends it to every service.
	RequireApproval bool `env:"BILLSYNC_REQUIRE_APPROVAL, default=false" flag:"require-approval" help:"a job is sent to any service, the simulator included, only after an approval (production always needs one)"`
}
