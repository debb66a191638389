package docs

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The convention (stated in docs/development.md):
//
//   - A fenced block whose info string is `sh` is run as printed by bash (-e -o pipefail) from
//     the root of a copy of the repository after `make demo`, with the examples' environment
//     README sets up: PATH starting with bin/ and BILLSYNC_DB=data/demo.duckdb.
//   - A fenced `sql` block is run through `report -sql -` on the demo warehouse.
//   - Either fails on a non-zero exit, or on an empty result where rows are promised: a `sql`
//     block must return rows, and no `report -sql` in an `sh` block may print "(0 rows)".
//   - `sh norun: <reason>` or `sql norun: <reason>` marks a block that cannot run here (a real
//     service, docker, cron, a file only the reader has); the reason is required.
//   - A block naming SMTP_SERVER sends e-mail: it gets a local mailpit (STARTTLS, a password)
//     as SMTP_SERVER and SMTP_PASSWORD_FILE, its certificate trusted through SSL_CERT_FILE
//     (mailpit_test.go).
//   - Any other block holding a line that starts like a command (report, syncer, make, go,
//     duckdb, bin/) fails: it must be marked sh (and run) or sh norun.
var docFiles = []string{"README.md", "docs/*.md"}

// nestedVar is set for the commands the test runs, so a block that runs the tests again fails
// at once instead of recursing.
const nestedVar = "BILLSYNC_DOCS_TEST_NESTED"

type block struct {
	file   string
	line   int // of the opening fence
	lang   string
	norun  string // the reason, when marked norun
	text   string
	marked bool // has an info string
}

var (
	fenceRE   = regexp.MustCompile("^(\\s*)(```+|~~~+)\\s*(.*)$")
	commandRE = regexp.MustCompile(`^\s*(\$\s*)?(report|syncer|sandbox|make|go|duckdb|bin/[a-z]+|python3?)(\s|$)`)
	zeroRows  = regexp.MustCompile(`(?m)^\(0 rows\b`)
	someRows  = regexp.MustCompile(`(?m)^\(([0-9]+) rows\b`)
)

// parse returns the fenced blocks of a Markdown file.
func parse(file string, b []byte) ([]block, error) {
	var out []block
	var cur *block
	var fence, indent string
	var body []string
	sc := bufio.NewScanner(bytes.NewReader(b))
	n := 0
	for sc.Scan() {
		n++
		line := sc.Text()
		m := fenceRE.FindStringSubmatch(line)
		if cur == nil {
			if m == nil {
				continue
			}
			indent, fence = m[1], m[2]
			info := strings.TrimSpace(m[3])
			lang, rest, _ := strings.Cut(info, " ")
			cur = &block{file: file, line: n, lang: lang, marked: info != ""}
			if r, ok := strings.CutPrefix(strings.TrimSpace(rest), "norun:"); ok {
				cur.norun = strings.TrimSpace(r)
				if cur.norun == "" {
					return nil, fmt.Errorf("%s:%d: norun needs a reason (```%s norun: why)", file, n, lang)
				}
			} else if strings.TrimSpace(rest) != "" {
				return nil, fmt.Errorf("%s:%d: unknown fence marker %q: use ```%s or ```%s norun: reason", file, n, rest, lang, lang)
			}
			body = nil
			continue
		}
		if m != nil && strings.HasPrefix(m[2], fence) && strings.TrimSpace(m[3]) == "" {
			cur.text = strings.Join(body, "\n") + "\n"
			out = append(out, *cur)
			cur = nil
			continue
		}
		body = append(body, strings.TrimPrefix(line, indent))
	}
	if cur != nil {
		return nil, fmt.Errorf("%s:%d: fence never closed", file, cur.line)
	}
	return out, sc.Err()
}

func repoRoot(t *testing.T) string {
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	return root
}

func collect(t *testing.T, root string) []block {
	var blocks []block
	for _, pat := range docFiles {
		files, err := filepath.Glob(filepath.Join(root, pat))
		if err != nil || len(files) == 0 {
			t.Fatalf("%s: %v (no files)", pat, err)
		}
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			rel, _ := filepath.Rel(root, f)
			bs, err := parse(rel, b)
			if err != nil {
				t.Fatal(err)
			}
			blocks = append(blocks, bs...)
		}
	}
	return blocks
}

// TestConvention fails on a command in a block the docs test would not run or account for.
func TestConvention(t *testing.T) {
	root := repoRoot(t)
	for _, b := range collect(t, root) {
		switch b.lang {
		case "sh", "sql":
			continue
		case "bash", "shell", "console", "zsh":
			t.Errorf("%s:%d: ```%s: write ```sh so the docs test runs it (or ```sh norun: reason)", b.file, b.line, b.lang)
			continue
		}
		for i, l := range strings.Split(b.text, "\n") {
			if commandRE.MatchString(l) {
				t.Errorf("%s:%d: %q looks like a command in a ```%s block: mark the block ```sh (it runs) or ```sh norun: reason",
					b.file, b.line+1+i, strings.TrimSpace(l), b.lang)
			}
		}
	}
}

// TestDocCommands runs every sh and sql block against a fresh demo warehouse.
func TestDocCommands(t *testing.T) {
	if os.Getenv(nestedVar) != "" {
		t.Fatal("the docs test runs inside itself: a doc block runs make test or go test; mark it sh norun")
	}
	root := repoRoot(t)
	blocks := collect(t, root)
	for _, tool := range []string{"bash", "make", "go"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("the docs test needs %s on PATH: %v", tool, err)
		}
	}
	work := t.TempDir()
	if err := copyTree(root, work); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	began := time.Now()
	// make demo's build step, done by go build into the copy: `make -o build demo` then runs
	// the Makefile's demo recipe exactly as a reader's make demo would, without building again.
	build := exec.CommandContext(ctx, "go", "build", "-o", filepath.Join(work, "bin")+string(filepath.Separator), "./cmd/...")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	built := time.Since(began)
	env := append(os.Environ(), "PATH="+filepath.Join(work, "bin")+string(os.PathListSeparator)+os.Getenv("PATH"),
		"BILLSYNC_DB=data/demo.duckdb")
	env = append(withoutBillsyncVars(env), nestedVar+"=1")
	demo := exec.CommandContext(ctx, "make", "-o", "build", "demo")
	demo.Dir, demo.Env = work, env
	demoOut, err := demo.CombinedOutput()
	if err != nil {
		t.Fatalf("make demo: %v\n%s", err, demoOut)
	}
	checkNextSteps(t, ctx, work, env, string(demoOut))
	mp := startDocsMailpit(t)
	if mp != nil {
		env = append(env, mp.env...)
	}
	t.Logf("built in %s, demo in %s", built.Round(time.Millisecond), (time.Since(began) - built).Round(time.Millisecond))

	ran, skipped := 0, 0
	for _, b := range blocks {
		if b.lang != "sh" && b.lang != "sql" {
			continue
		}
		if b.norun != "" {
			skipped++
			t.Logf("%s:%d: not run: %s", b.file, b.line, b.norun)
			continue
		}
		if mp == nil && strings.Contains(b.text, mailVar) {
			skipped++
			t.Logf("%s:%d: not run: mailpit is not installed (go install github.com/axllent/mailpit@v1.33.1)", b.file, b.line)
			continue
		}
		ran++
		name := fmt.Sprintf("%s:%d", b.file, b.line)
		stdout, stderr, err := runBlock(ctx, work, env, b)
		switch {
		case err != nil:
			t.Errorf("%s: %v\n%s\nstdout:\n%s\nstderr:\n%s", name, err, b.text, tail(stdout), tail(stderr))
		case b.lang == "sql" && !hasRows(stdout):
			t.Errorf("%s: the query returned no rows on the demo warehouse:\n%s\n%s", name, b.text, tail(stdout))
		case zeroRows.MatchString(stdout):
			t.Errorf("%s: a query printed (0 rows) on the demo warehouse:\n%s\n%s", name, b.text, tail(stdout))
		}
	}
	if mp != nil {
		// docs/delivery.md's e-mail block sent the month-end pack through the server.
		if got := mp.subjects(t); !slices.ContainsFunc(got, func(s string) bool { return strings.Contains(s, "Laporan month-end per ") }) {
			t.Errorf("the SMTP server received %q: want the month-end pack docs/delivery.md's e-mail block sends", got)
		}
	}
	t.Logf("%d blocks run, %d marked norun, in %s", ran, skipped, time.Since(began).Round(time.Millisecond))
}

// checkNextSteps runs the demo's closing advice as printed: the workbook exists, the report
// command runs and returns rows, the DuckDB command names the same file.
func checkNextSteps(t *testing.T, ctx context.Context, work string, env []string, out string) {
	i := strings.Index(out, "Next steps:")
	if i < 0 {
		t.Fatalf("make demo printed no next steps:\n%s", out)
	}
	lines := strings.Split(out[i:], "\n")
	var cmds []string
	for _, l := range lines[1:] {
		if strings.HasPrefix(l, "       ") {
			cmds = append(cmds, strings.TrimSpace(l))
		}
	}
	if len(cmds) != 3 {
		t.Fatalf("want three next steps with a command each, got %q", cmds)
	}
	if _, err := os.Stat(filepath.Join(work, cmds[0])); err != nil || !strings.HasSuffix(cmds[0], ".xlsx") {
		t.Errorf("next step 1 names %q: %v", cmds[0], err)
	}
	if !strings.HasPrefix(cmds[1], "bin/report ") {
		t.Errorf("next step 2 %q: want our own binary", cmds[1])
	}
	stdout, stderr, err := runBlock(ctx, work, env, block{file: "make demo", lang: "sh", text: cmds[1] + "\n"})
	if err != nil || !hasRows(stdout) {
		t.Errorf("next step 2 %q: %v, no rows:\n%s\n%s", cmds[1], err, stdout, stderr)
	}
	if !strings.HasPrefix(cmds[2], "duckdb -readonly data/demo.duckdb ") {
		t.Errorf("next step 3 %q: want the DuckDB CLI on the same file, read-only", cmds[2])
	}
	if _, err := exec.LookPath("duckdb"); err == nil {
		if _, stderr, err := runBlock(ctx, work, env, block{file: "make demo", lang: "sh", text: cmds[2] + "\n"}); err != nil {
			t.Errorf("next step 3 %q: %v\n%s", cmds[2], err, stderr)
		}
	} else {
		t.Logf("next step 3 not run: no DuckDB CLI on this machine (the file's format is checked by the report command)")
	}
}

func hasRows(stdout string) bool {
	m := someRows.FindAllStringSubmatch(stdout, -1)
	if len(m) == 0 {
		return false
	}
	n, _ := strconv.Atoi(m[len(m)-1][1])
	return n > 0
}

// runBlock runs one block: sh through bash, sql through report -sql -.
func runBlock(ctx context.Context, dir string, env []string, b block) (string, string, error) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	var cmd *exec.Cmd
	if b.lang == "sql" {
		cmd = exec.CommandContext(ctx, filepath.Join(dir, "bin", "report"), "-sql", "-", "-format", "table")
		cmd.Stdin = strings.NewReader(b.text)
	} else {
		// The ERR trap names the failing line of the block and its command.
		script := "trap 'echo \"docs test: block line $LINENO: $BASH_COMMAND exited $?\" >&2' ERR\n" + b.text
		cmd = exec.CommandContext(ctx, "bash", "-e", "-o", "pipefail", "-c", script)
	}
	cmd.Dir, cmd.Env = dir, env
	// A block's children (make, servers) go with it when it times out.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	return stdout.String(), stderr.String(), err
}

// withoutBillsyncVars drops the runner's own BILLSYNC_* settings but the ones the harness set
// last (later entries win in os/exec, but a stray BILLSYNC_API_KEY must not leak in at all).
func withoutBillsyncVars(env []string) []string {
	var out []string
	for i, kv := range env {
		if strings.HasPrefix(kv, "BILLSYNC_") && i < len(env)-1 {
			continue
		}
		out = append(out, kv)
	}
	return out
}

func tail(s string) string {
	const n = 3000
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}

// copyTree copies the repository without its git data and build or run outputs: what a fresh
// clone has.
func copyTree(from, to string) error {
	skip := map[string]bool{".git": true, "bin": true, "data": true, "out": true}
	return filepath.WalkDir(from, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, p)
		if rel == "." {
			return nil
		}
		if d.IsDir() && skip[rel] {
			return filepath.SkipDir
		}
		target := filepath.Join(to, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		if !d.Type().IsRegular() {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, b, info.Mode().Perm())
	})
}
