package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/billsync/billsync/internal/cli/clitest"
	"github.com/billsync/billsync/internal/sandbox"
	"github.com/sethvargo/go-envconfig"
)

// syncer runs the command as a person does (the test binary in child mode) and returns what they see.
func syncer(t *testing.T, env map[string]string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), "SYNCER_TEST_MAIN=1")
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		code = ee.ExitCode()
	case err != nil:
		t.Fatal(err)
	}
	return o.String(), e.String(), code
}

func TestJobHelpAndUsageErrors(t *testing.T) {
	env := map[string]string{"BILLSYNC_DB": filepath.Join(t.TempDir(), "w.duckdb")}
	for _, args := range [][]string{{"job", "-h"}, {"job", "--help"}, {"job", "help"}, {"job", "plan", "-h"}, {"job", "apply", "-h"},
		{"job", "apply", "--help"}, {"job", "approve", "-h"}, {"job", "resolve", "-h"}, {"job", "show", "-h"}, {"job", "list", "-h"},
		{"job", "products", "-h"}, {"job", "plan", "-kind", "credit-topup", "-h"}} {
		out, errs, code := syncer(t, env, args...)
		if code != 0 || !strings.HasPrefix(out, "usage:") || errs != "" {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want usage on stdout and exit 0", args, code, out, errs)
		}
	}
	out, _, _ := syncer(t, env, "job", "plan", "-h")
	for _, want := range []string{"-kind", "-in", "-skip-blank", "-again", "-db", "-journal", "-account", "-base-url", "-api-key-file",
		"-environment", "(BILLSYNC_ENVIRONMENT)"} {
		if !strings.Contains(out, want) {
			t.Errorf("job plan -h does not show %s:\n%s", want, out)
		}
	}
	for _, args := range [][]string{{"job"}, {"job", "frobnicate"}, {"job", "approve"}, {"job", "show", "a", "b"},
		{"job", "apply", "-max", "x"}, {"job", "apply", "-max", "-1", "abc"}, {"job", "plan", "-nosuchflag"}, {"job", "plan"},
		{"job", "resolve", "abc", "1", "maybe", "-why", "x"}, {"job", "resolve", "abc", "one", "applied", "-why", "x"},
		{"job", "resolve", "abc", "1", "applied"}, {"job", "list", "extra"}} {
		out, errs, code := syncer(t, env, args...)
		if code != 2 || !strings.HasPrefix(errs, "usage: ") || out != "" {
			t.Errorf("%v: exit %d, stderr %q; want a usage error and exit 2", args, code, errs)
		}
	}
}

// TestJobCommandAsAFinanceUserRunsIt: a rejected file prints every problem (the first 50 and a count), a fully
// applied file planned again says so, approving twice says already approved, list and products read as a
// person reads them, and an unresolved row is shown with the command that settles it, which runs as printed.
func TestJobCommandAsAFinanceUserRunsIt(t *testing.T) {
	// The simulator's clock starts at billsync's: a lost answer is reconciled only while the service's Date
	// agrees with billsync's clock.
	sb, err := sandbox.New(sandbox.Options{Seed: 3, Scale: 0.02, Key: secret, Now: time.Now().UTC().Truncate(time.Second),
		CreditTimes: sandbox.CreditTimeNoZone})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(sb)
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	vars := map[string]string{"BILLSYNC_BASE_URL": srv.URL, "BILLSYNC_API_KEY": secret, "BILLSYNC_DB": filepath.Join(dir, "billsync.duckdb"),
		"BILLSYNC_RATE_PER_MIN": "0", "BILLSYNC_ACCOUNT": "main", "BILLSYNC_TZ": "Asia/Jakarta"}
	var logs bytes.Buffer
	if err := run(context.Background(), []string{"-once"}, envconfig.MapLookuper(vars), &logs, &logs); err != nil {
		t.Fatalf("sync: %v\n%s", err, logs.String())
	}
	var custs []struct{ ID string }
	for _, raw := range sb.Dump("customers")[:3] {
		var c struct{ ID string }
		json.Unmarshal(raw, &c)
		custs = append(custs, c)
	}
	prod := creditProduct(t, sb)
	write := func(name string, lines ...string) string {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(strings.Join(lines, "\n")+"\n"), 0o644)
		return p
	}

	// A file with 61 problems: every one up to 50 is printed, then the count.
	bad := []string{"customerId,productId,amount"}
	for i := 1; i <= 61; i++ {
		bad = append(bad, fmt.Sprintf("%s,%s,%d.000", custs[i%3].ID, prod, i))
	}
	out, errs, code := syncer(t, vars, "job", "plan", "-kind", "credit-topup", "-in", write("bad.csv", bad...))
	if code != 1 || !strings.Contains(errs, "61 problem(s)") || strings.Count(errs, "bad.csv line ") != 50 ||
		!strings.Contains(errs, "… and 11 more") || !strings.Contains(errs, `line 51 column C (amount): amount "50.000" is not a whole number in digits: write 50000`) {
		t.Errorf("bad file: exit %d\nstdout %s\nstderr %s", code, out, errs)
	}

	// Plan, apply, plan the same file again.
	good := write("topup.csv", "customerId,productId,amount", custs[0].ID+","+prod+",1500000")
	out, errs, code = syncer(t, vars, "job", "plan", "-kind", "credit-topup", "-in", good)
	id := regexp.MustCompile(`syncer job apply ([0-9a-f]{12})`).FindStringSubmatch(out)
	if code != 0 || id == nil {
		t.Fatalf("plan: exit %d\n%s%s", code, out, errs)
	}
	if out, errs, code = syncer(t, vars, "job", "apply", id[1]); code != 0 {
		t.Fatalf("apply: exit %d\n%s%s", code, out, errs)
	}
	out, _, code = syncer(t, vars, "job", "plan", "-kind", "credit-topup", "-in", good)
	if code != 0 || !strings.Contains(out, "is fully applied") || strings.Contains(out, "To send it") {
		t.Errorf("re-planning an applied file: exit %d\n%s", code, out)
	}

	// Four eyes: the login that planned it may not approve it; the summary shows first. A team of one
	// allows it with BILLSYNC_ALLOW_SELF_APPROVE, and the approval says so. Approving twice changes nothing.
	out, errs, code = syncer(t, vars, "job", "approve", id[1])
	target := "target: account main at " + srv.URL + " (not production)"
	if code != 1 || !strings.Contains(out, "PRODUCT") || !strings.Contains(out, "1.500.000") || !strings.Contains(out, target) ||
		!strings.Contains(errs, "may not approve it too") || !strings.Contains(errs, "BILLSYNC_ALLOW_SELF_APPROVE=true") {
		t.Errorf("self-approval: exit %d\nstdout %s\nstderr %s", code, out, errs)
	}
	self := map[string]string{"BILLSYNC_ALLOW_SELF_APPROVE": "true"}
	for k, v := range vars {
		self[k] = v
	}
	if out, errs, code = syncer(t, self, "job", "approve", id[1]); code != 0 || !strings.Contains(out, "approved by") ||
		!strings.Contains(out, "a self-approval") || !strings.Contains(out, srv.URL+" (not production)") {
		t.Errorf("approve: exit %d %s%s", code, out, errs)
	}
	if out, _, code = syncer(t, self, "job", "approve", id[1]); code != 0 || !strings.Contains(out, "already approved") {
		t.Errorf("approve again: exit %d %s", code, out)
	}
	// Who planned, approved and applied it, in WIB.
	out, _, code = syncer(t, vars, "job", "show", id[1])
	t.Logf("job show prints:\n%s", out)
	for _, want := range []string{"history of plan " + id[1] + ", times in WIB (Asia/Jakarta):", "  planned   ", "WIB by ",
		"  approved  ", "a self-approval", "  applied   ", "run 1 of the plan", "1.500.000"} {
		if code != 0 || !strings.Contains(out, want) {
			t.Errorf("job show: exit %d, no %q", code, want)
		}
	}
	if strings.Contains(out, " UTC") {
		t.Errorf("job show prints a time in UTC:\n%s", out)
	}

	// An unknown outcome the history cannot settle (its times carry no zone): unresolved, exit 1, the command shown.
	sb.FailNext(sandbox.FaultApplyThen500, 1, "/credit/v1/credit/customer/add-credit")
	second := write("topup2.csv", "customerId,productId,amount", custs[1].ID+","+prod+",2500", custs[2].ID+","+prod+",3500")
	out, errs, code = syncer(t, vars, "job", "plan", "-kind", "credit-topup", "-in", second, "-apply")
	cmdRe := regexp.MustCompile(`syncer job resolve ([0-9a-f]{12}) (\d+) applied\|not-applied -why "what you checked"`)
	m := cmdRe.FindStringSubmatch(out)
	t.Logf("unresolved run prints:\n%s%s", out, errs)
	if code != 1 || m == nil || !strings.Contains(out, "UNRESOLVED") || !strings.Contains(out, "missing:") ||
		!strings.Contains(out, "no time zone") || !strings.Contains(errs, "1 row(s) unresolved") {
		t.Fatalf("unresolved run: exit %d\nstdout %s\nstderr %s", code, out, errs)
	}
	adds := func() int {
		n := 0
		for _, r := range sb.Requests() {
			if strings.HasSuffix(r.Path, "/add-credit") {
				n++
			}
		}
		return n
	}
	before := adds()
	if out, errs, code = syncer(t, vars, "job", "apply", m[1]); code != 1 || adds() != before {
		t.Errorf("apply with an unresolved row: exit %d, %d sends\n%s%s", code, adds()-before, out, errs)
	}
	// Who resolves is the login running the command, never a name on the command line.
	out, errs, code = syncer(t, vars, "job", "resolve", m[1], m[2], "applied", "-why", "dilihat siti", "-by", "siti")
	if code != 2 || !strings.Contains(errs, `-by "siti": a resolution is journaled under the OS login of whoever runs it`) {
		t.Errorf("resolve -by: exit %d\n%s%s", code, out, errs)
	}
	// siti (her own login) settling it as not applied while the service shows the entry is refused, naming it.
	siti := map[string]string{"SYNCER_TEST_LOGIN": "siti"}
	for k, v := range vars {
		siti[k] = v
	}
	out, errs, code = syncer(t, siti, "job", "resolve", m[1], m[2], "not-applied", "-why", "tidak ada di dasbor")
	if code != 1 || !strings.Contains(errs, "the service shows entry ") || !strings.Contains(errs, "applied fits") ||
		!strings.Contains(errs, "-force") {
		t.Errorf("resolve not-applied while the entry shows: exit %d\n%s%s", code, out, errs)
	}
	// The person checks the customer's balance on the service and settles the row as printed.
	out, errs, code = syncer(t, siti, "job", "resolve", m[1], m[2], "applied", "-why", "saldo 2.500 terlihat di dasbor")
	if code != 0 || !strings.Contains(out, "resolved as applied by siti") {
		t.Fatalf("resolve: exit %d\n%s%s", code, out, errs)
	}
	if out, errs, code = syncer(t, vars, "job", "apply", m[1]); code != 0 || adds() != before {
		t.Errorf("apply after resolving: exit %d, %d sends\n%s%s", code, adds()-before, out, errs)
	}
	host, _ := os.Hostname()
	if out, _, _ = syncer(t, vars, "job", "show", m[1]); !strings.Contains(out, "WIB by siti on "+host+": row "+m[2]+" as succeeded") {
		t.Errorf("job show does not say siti resolved it, where:\n%s", out)
	}

	// list: a header, local times, grouped counts; products: ids to put in a file.
	out, _, code = syncer(t, vars, "job", "list")
	t.Logf("job list prints:\n%s", out)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if code != 0 || len(lines) != 3 || !strings.Contains(lines[0], "CREATED") || !strings.Contains(lines[1], " WIB ") ||
		!strings.Contains(lines[0], "UNRESOLVED") || !strings.Contains(out, id[1]) || !strings.Contains(out, "yes") {
		t.Errorf("job list: exit %d\n%s", code, out)
	}
	// One clock for people: every time job list, job show and syncer status print (and their
	// logs) is in BILLSYNC_TZ with its zone named, none in UTC, none without a zone. (status
	// -json is for programs: RFC 3339 in UTC, "Z".)
	jkt, _ := time.LoadLocation("Asia/Jakarta")
	for _, args := range [][]string{{"job", "list"}, {"job", "show", id[1]}, {"job", "show", m[1]}, {"status"}} {
		out, errs, _ := syncer(t, vars, args...)
		if bad := clitest.Unzoned(out+errs, jkt, time.Now()); len(bad) > 0 {
			t.Errorf("syncer %s prints %q: times a person cannot place on the WIB clock\n%s%s", strings.Join(args, " "), bad, out, errs)
		}
	}
	out, _, code = syncer(t, vars, "job", "products")
	if code != 0 || !strings.HasPrefix(out, "PRODUCT ID") || !strings.Contains(out, prod) {
		t.Errorf("job products: exit %d\n%s", code, out)
	}
	if strings.Contains(out+errs, secret) {
		t.Error("the API key appears in the output")
	}
}
