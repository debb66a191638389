package docs

import (
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/billsync/billsync/internal/report"
)

// No Docker engine runs here, so the image is checked by what builds it: the Dockerfile, the
// .dockerignore and the operators' docker run (dockerRunPage). Docker's own rules are followed where they
// matter: the build context is the directory less what .dockerignore matches (Go path patterns
// with **, matched from the context's root, a directory's match covering what is in it, the
// last matching line deciding, ! re-including), and a build stage sees only what its COPY lines
// take from the context.

// dockerRunPage is the page whose docker run is checked against the image.
const dockerRunPage = "docs/operations.md"

// instruction is one Dockerfile instruction, continuation lines joined.
type instruction struct {
	cmd, args string
	line      int
}

// stage is one FROM and what follows it.
type stage struct {
	name  string
	instr []instruction
}

func parseDockerfile(t *testing.T, b []byte) []stage {
	t.Helper()
	var stages []stage
	lines := strings.Split(string(b), "\n")
	for i := 0; i < len(lines); i++ {
		l := strings.TrimSpace(lines[i])
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		start := i + 1
		for strings.HasSuffix(l, `\`) && i+1 < len(lines) {
			i++
			next := strings.TrimSpace(lines[i])
			if strings.HasPrefix(next, "#") {
				continue
			}
			l = strings.TrimSuffix(l, `\`) + " " + next
		}
		cmd, args, _ := strings.Cut(l, " ")
		in := instruction{cmd: strings.ToUpper(cmd), args: strings.TrimSpace(args), line: start}
		if in.cmd == "FROM" {
			f := strings.Fields(in.args)
			st := stage{name: f[0]}
			if len(f) == 3 && strings.EqualFold(f[1], "AS") {
				st.name = f[2]
			}
			stages = append(stages, st)
			continue
		}
		if len(stages) == 0 {
			t.Fatalf("Dockerfile:%d: %s before FROM", start, cmd)
		}
		stages[len(stages)-1].instr = append(stages[len(stages)-1].instr, in)
	}
	return stages
}

// env is what a stage's ENV lines set (KEY=value pairs, values unquoted).
func (s stage) env() map[string]string {
	out := map[string]string{}
	re := regexp.MustCompile(`([A-Za-z_][A-Za-z0-9_]*)=("[^"]*"|\S*)`)
	for _, in := range s.instr {
		if in.cmd != "ENV" {
			continue
		}
		for _, m := range re.FindAllStringSubmatch(in.args, -1) {
			out[m[1]] = strings.Trim(m[2], `"`)
		}
	}
	return out
}

// ignoreRule is one .dockerignore line.
type ignoreRule struct {
	re     *regexp.Regexp
	negate bool
}

func parseIgnore(b []byte) []ignoreRule {
	var rules []ignoreRule
	for _, l := range strings.Split(string(b), "\n") {
		l = strings.TrimSpace(l)
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		r := ignoreRule{}
		if l, r.negate = strings.CutPrefix(l, "!"); r.negate {
			l = strings.TrimSpace(l)
		}
		l = strings.TrimPrefix(filepath.Clean(l), "/")
		var re strings.Builder
		re.WriteString("^")
		for i := 0; i < len(l); i++ {
			switch c := l[i]; {
			case strings.HasPrefix(l[i:], "**/"):
				re.WriteString("(.*/)?")
				i += 2
			case strings.HasPrefix(l[i:], "**"):
				re.WriteString(".*")
				i++
			case c == '*':
				re.WriteString("[^/]*")
			case c == '?':
				re.WriteString("[^/]")
			default:
				re.WriteString(regexp.QuoteMeta(string(c)))
			}
		}
		re.WriteString("$")
		r.re = regexp.MustCompile(re.String())
		rules = append(rules, r)
	}
	return rules
}

// ignored says the context leaves path (slash-separated, from the root) out: the last rule
// matching it or a directory above it decides.
func ignored(rules []ignoreRule, path string) bool {
	parts := strings.Split(path, "/")
	out := false
	for _, r := range rules {
		for i := 1; i <= len(parts); i++ {
			if r.re.MatchString(strings.Join(parts[:i], "/")) {
				out = !r.negate
				break
			}
		}
	}
	return out
}

// copied maps a context path to where the stage's COPY lines put it ("" when none takes it).
func copied(s stage, path string) []string {
	var dsts []string
	for _, in := range s.instr {
		if in.cmd != "COPY" && in.cmd != "ADD" {
			continue
		}
		f := strings.Fields(in.args)
		if len(f) > 0 && strings.HasPrefix(f[0], "--from") {
			continue
		}
		for len(f) > 0 && strings.HasPrefix(f[0], "--") {
			f = f[1:]
		}
		if len(f) < 2 {
			continue
		}
		dst := f[len(f)-1]
		for _, src := range f[:len(f)-1] {
			src = strings.TrimPrefix(filepath.Clean(src), "./")
			switch {
			case src == "." || src == "/":
				dsts = append(dsts, filepath.Join(dst, path))
			case path == src && !strings.HasSuffix(dst, "/"):
				dsts = append(dsts, dst)
			case path == src:
				dsts = append(dsts, filepath.Join(dst, filepath.Base(path)))
			case strings.HasPrefix(path, src+"/"):
				dsts = append(dsts, filepath.Join(dst, strings.TrimPrefix(path, src+"/")))
			}
		}
	}
	return dsts
}

// secretPaths are what a checkout where billsync runs holds beside the sources: none may reach
// the build context, whatever the Dockerfile copies.
var secretPaths = []string{
	"data/billsync.duckdb", "data/billsync.duckdb.wal", "data/demo.duckdb", "data/journal.duckdb",
	"data/jobs/plan-0123.csv", "data/jobs/result-0123-run1.csv", "out/credit_2026-06-05.xlsx",
	"out/aging_2026-06-05_detail.csv", ".git/config", ".git/objects/pack/pack-1.pack", "bin/syncer",
	"billsync.duckdb", "warehouse/old.duckdb", "internal/report/copy.duckdb.tmp-1", "secrets/billsync-key",
	"deploy/secrets/api-key", "billsync.key", "tls/server.pem", ".env", "cmd/syncer/.env", "topup.xlsx",
	"topup.csv", "unicode.txt", "syncer", "report", "sandbox", "jobs.test", "cpu.prof",
}

// TestDockerBuildKeepsDataOut: the build context leaves out every path where data, keys or
// history live, the build stage copies the sources only, and the sources it copies build the
// image's binaries with the Dockerfile's own command and settings.
func TestDockerBuildKeepsDataOut(t *testing.T) {
	root := repoRoot(t)
	df, err := os.ReadFile(filepath.Join(root, "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	ig, err := os.ReadFile(filepath.Join(root, ".dockerignore"))
	if err != nil {
		t.Fatalf("no .dockerignore: the whole checkout, data and .git included, is the build context (%v)", err)
	}
	stages := parseDockerfile(t, df)
	if len(stages) < 2 {
		t.Fatalf("%d stages: want a build stage and a runtime stage", len(stages))
	}
	build, run := stages[0], stages[len(stages)-1]
	rules := parseIgnore(ig)
	for _, p := range secretPaths {
		if !ignored(rules, p) {
			t.Errorf(".dockerignore lets %s into the build context", p)
		}
		if !ignored(rules, p) && len(copied(build, p)) > 0 {
			t.Errorf("the build stage copies %s", p)
		}
	}
	// The sources themselves are in the context and copied.
	var context []string
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if rel == "." {
			return nil
		}
		if ignored(rules, rel) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.IsDir() {
			context = append(context, rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"go.mod", "go.sum", "cmd/syncer/main.go", "internal/report/samenames.sql", "queries/embed.go", "reports/credit.yaml"} {
		if !slices.Contains(context, p) || len(copied(build, p)) == 0 {
			t.Errorf("%s: in the context %v, copied %v", p, slices.Contains(context, p), copied(build, p))
		}
	}

	// Reports on by default, on the volume, with a value syncer takes.
	renv := run.env()
	defs, err := report.Definitions()
	if err != nil {
		t.Fatal(err)
	}
	names := []string{"all"}
	for _, d := range defs {
		names = append(names, d.Name)
	}
	switch v := renv["BILLSYNC_REPORTS"]; {
	case v == "":
		t.Errorf("the image sets no BILLSYNC_REPORTS: syncer writes no reports")
	default:
		for _, n := range strings.Split(v, ",") {
			if !slices.Contains(names, strings.TrimSpace(n)) {
				t.Errorf("BILLSYNC_REPORTS=%s: %q is not all or a report (%v)", v, n, names)
			}
		}
	}
	var volumes []string
	for _, in := range run.instr {
		if in.cmd == "VOLUME" {
			volumes = append(volumes, regexp.MustCompile(`/[^"\], ]+`).FindAllString(in.args, -1)...)
		}
	}
	for _, k := range []string{"BILLSYNC_REPORTS_OUT", "BILLSYNC_DB"} {
		v := renv[k]
		if v == "" || !slices.ContainsFunc(volumes, func(vol string) bool { return strings.HasPrefix(v, vol+"/") || v == vol }) {
			t.Errorf("%s=%q: not on a volume (%v)", k, v, volumes)
		}
	}

	// The operators' docker run (docs/operations.md) mounts the key file where BILLSYNC_API_KEY_FILE
	// says, read-only.
	page, err := os.ReadFile(filepath.Join(root, dockerRunPage))
	if err != nil {
		t.Fatal(err)
	}
	blocks, err := parse(dockerRunPage, page)
	if err != nil {
		t.Fatal(err)
	}
	runs := 0
	for _, b := range blocks {
		text := strings.ReplaceAll(b.text, "\\\n", " ")
		for _, l := range strings.Split(text, "\n") {
			f := strings.Fields(l)
			if len(f) < 2 || f[0] != "docker" || f[1] != "run" {
				continue
			}
			runs++
			keyFile, mounts := "", map[string]string{}
			for i := 2; i+1 < len(f); i++ {
				switch f[i] {
				case "-e", "--env":
					if v, ok := strings.CutPrefix(f[i+1], "BILLSYNC_API_KEY_FILE="); ok {
						keyFile = v
					}
				case "-v", "--volume":
					parts := strings.Split(f[i+1], ":")
					if len(parts) >= 2 {
						mounts[parts[1]] = strings.Join(parts[2:], ":")
					}
				}
			}
			opts, ok := mounts[keyFile]
			switch {
			case keyFile == "":
				t.Errorf("%s:%d: docker run without BILLSYNC_API_KEY_FILE: %s", dockerRunPage, b.line, l)
			case !ok:
				t.Errorf("%s:%d: BILLSYNC_API_KEY_FILE=%s, which the docker run mounts nothing at: %s", dockerRunPage, b.line, keyFile, l)
			case !strings.Contains(opts, "ro"):
				t.Errorf("%s:%d: the key is mounted writable: %s", dockerRunPage, b.line, l)
			}
			if _, ok := mounts["/data"]; !ok {
				t.Errorf("%s:%d: docker run keeps the warehouse in the container, not on a volume: %s", dockerRunPage, b.line, l)
			}
		}
	}
	if runs == 0 {
		t.Errorf("%s has no docker run", dockerRunPage)
	}

	if testing.Short() {
		t.Skip("the build: a minute or more cold")
	}
	buildLikeDocker(t, root, build, run, context)
}

// buildLikeDocker copies what the build stage's COPY lines take from the context into a
// directory of its own, runs the stage's go build line there with its ENV, into a directory
// standing for the one the runtime stage copies the binaries from, and checks every binary
// the build names is there.
func buildLikeDocker(t *testing.T, root string, build, run stage, context []string) {
	src, out := filepath.Join(t.TempDir(), "src"), t.TempDir()
	for _, p := range context {
		for _, dst := range copied(build, p) {
			dst = filepath.Join(src, strings.TrimPrefix(dst, "./"))
			if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
				t.Fatal(err)
			}
			b, err := os.ReadFile(filepath.Join(root, p))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(dst, b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	// where the runtime stage takes the binaries from
	from := ""
	for _, in := range run.instr {
		if f := strings.Fields(in.args); in.cmd == "COPY" && len(f) == 3 && f[0] == "--from="+build.name {
			from = f[1]
		}
	}
	if from == "" {
		t.Fatalf("the runtime stage copies nothing from the %s stage", build.name)
	}
	var goBuild string
	for _, in := range build.instr {
		if in.cmd == "RUN" && strings.HasPrefix(in.args, "go build ") {
			goBuild = in.args
		}
	}
	if goBuild == "" || !strings.Contains(goBuild, " -o "+from+" ") {
		t.Fatalf("no RUN go build ... -o %s in the build stage: %q", from, goBuild)
	}
	cmd := exec.Command("sh", "-c", strings.Replace(goBuild, " -o "+from+" ", " -o "+out+"/ ", 1))
	cmd.Dir = src
	cmd.Env = os.Environ()
	for k, v := range build.env() {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s (in a copy of what the Dockerfile copies): %v\n%s", goBuild, err, b)
	}
	for _, pkg := range regexp.MustCompile(`\./cmd/([a-z]+)`).FindAllStringSubmatch(goBuild, -1) {
		st, err := os.Stat(filepath.Join(out, pkg[1]))
		if err != nil || st.Mode()&0o111 == 0 {
			t.Errorf("%s: not built (%v)", pkg[1], err)
		}
	}
}
