package main

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http/httptest"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/billsync/billsync/internal/jobs"
	"github.com/billsync/billsync/internal/sandbox"
	"github.com/sethvargo/go-envconfig"
)

// testLogin is the child's login in a test (SYNCER_TEST_LOGIN): a name the OS gives uid 1000, or, for a
// number, that uid without a passwd entry. Both go through jobs.LoginOf, as the real lookup does.
func testLogin(as string) func() string {
	if uid, err := strconv.Atoi(as); err == nil {
		return func() string {
			return jobs.LoginOf(uid, func(string) (*user.User, error) { return nil, user.UnknownUserIdError(uid) })
		}
	}
	return func() string {
		return jobs.LoginOf(1000, func(id string) (*user.User, error) { return &user.User{Uid: id, Username: as}, nil })
	}
}

// fourEyesWorld is a synced warehouse of one simulator, a top-up file for one customer, and the service
// reached two ways: at its loopback address (the simulator, not production) and as
// http://billing.example (production: not loopback), which the child commands reach through the
// simulator acting as their HTTP proxy.
type fourEyesWorld struct {
	t          *testing.T
	sb         *sandbox.Server
	dir        string
	vars, prod map[string]string
	in         string
	customer   string
	product    string
}

const prodURL = "http://billing.example"

func newFourEyesWorld(t *testing.T, dir string) *fourEyesWorld {
	t.Helper()
	sb, err := sandbox.New(sandbox.Options{Seed: 3, Scale: 0.02, Key: secret, Now: time.Now().UTC().Truncate(time.Second)})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(sb)
	t.Cleanup(srv.Close)
	w := &fourEyesWorld{t: t, sb: sb, dir: dir}
	w.vars = map[string]string{"BILLSYNC_BASE_URL": srv.URL, "BILLSYNC_API_KEY": secret, "BILLSYNC_DB": filepath.Join(dir, "billsync.duckdb"),
		"BILLSYNC_RATE_PER_MIN": "0", "BILLSYNC_ACCOUNT": "main", "BILLSYNC_TZ": "Asia/Jakarta"}
	if err := run(context.Background(), []string{"-once"}, envconfig.MapLookuper(w.vars), io.Discard, io.Discard); err != nil {
		t.Fatalf("sync: %v", err)
	}
	w.prod = w.with(map[string]string{"BILLSYNC_BASE_URL": prodURL, "HTTP_PROXY": srv.URL, "NO_PROXY": "127.0.0.1"})
	var c struct{ ID string }
	json.Unmarshal(sb.Dump("customers")[0], &c)
	w.customer, w.product = c.ID, creditProduct(t, sb)
	w.in = filepath.Join(dir, "topup.csv")
	if err := os.WriteFile(w.in, []byte("customerId,productId,amount\n"+c.ID+","+w.product+",175000\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return w
}

// with is w's variables (vars) with more set.
func (w *fourEyesWorld) with(more map[string]string, base ...map[string]string) map[string]string {
	out := map[string]string{}
	from := w.vars
	if len(base) > 0 {
		from = base[0]
	}
	for k, v := range from {
		out[k] = v
	}
	for k, v := range more {
		out[k] = v
	}
	return out
}

// as runs syncer with the given variables as login (SYNCER_TEST_LOGIN).
func (w *fourEyesWorld) as(login string, vars map[string]string, args ...string) (string, string, int) {
	w.t.Helper()
	return syncer(w.t, w.with(map[string]string{"SYNCER_TEST_LOGIN": login}, vars), args...)
}

// topups counts the top-ups the simulator accepted, and balance is the customer's credit there.
func (w *fourEyesWorld) topups() int {
	n := 0
	for _, r := range w.sb.Requests() {
		if r.Method == "POST" && strings.HasSuffix(r.Path, "/add-credit") && r.Status == 200 {
			n++
		}
	}
	return n
}

func (w *fourEyesWorld) balance() int64 {
	var b int64
	for _, raw := range w.sb.Dump("credit_ledger") {
		var l struct {
			CustomerID, ProductID string
			Credit, Debit         int64
		}
		json.Unmarshal(raw, &l)
		if l.CustomerID == w.customer && l.ProductID == w.product {
			b += l.Credit - l.Debit
		}
	}
	return b
}

// plan plans the top-up file as login and returns the plan id.
func (w *fourEyesWorld) plan(login string, vars map[string]string) string {
	w.t.Helper()
	out, errs, code := w.as(login, vars, "job", "plan", "-kind", "credit-topup", "-in", w.in)
	id := regexp.MustCompile(`syncer job apply ([0-9a-f]{12})`).FindStringSubmatch(out)
	if code != 0 || id == nil {
		w.t.Fatalf("plan as %s: exit %d\n%s%s", login, code, out, errs)
	}
	return id[1]
}

// printedCommands are the commands a refusal tells the person to run, as written between backquotes.
func printedCommands(msg string) map[string][]string {
	out := map[string][]string{}
	for _, m := range regexp.MustCompile("`syncer (job [^`]+)`").FindAllStringSubmatch(msg, -1) {
		args := strings.Fields(m[1])
		out[args[1]] = args
	}
	return out
}

// TestFourEyesAsPeopleRunIt: the sequences of issue 35 with the commands as people run them, the
// simulator playing production (http://billing.example): alice plans; alice's `apply -confirm-production`
// is refused and nothing reaches the service (no credit added); alice's own approval is refused; bob runs
// the approve command the refusal printed; alice's apply (the command printed) sends once; again sends
// nothing. The same through the daemon (-apply-approved), and for a team of one with
// BILLSYNC_ALLOW_SELF_APPROVE.
func TestFourEyesAsPeopleRunIt(t *testing.T) {
	t.Parallel() // its own simulator, files and child processes: runs while the delivery daemon test waits
	for _, tc := range []struct {
		name      string
		daemon    bool
		allowSelf bool
	}{
		{"by hand", false, false},
		{"the daemon", true, false},
		{"by hand, a team of one", false, true},
		{"the daemon, a team of one", true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newFourEyesWorld(t, t.TempDir())
			prod := w.prod
			if tc.allowSelf {
				prod = w.with(map[string]string{"BILLSYNC_ALLOW_SELF_APPROVE": "true"}, w.prod)
			}
			var id string
			send := func() (string, string, int) {
				if tc.daemon {
					return w.as("alice", prod, "-once", "-apply-approved")
				}
				return w.as("alice", prod, "job", "apply", id, "-confirm-production")
			}
			id = w.plan("alice", prod)
			before := w.balance()

			out, errs, code := send()
			if !tc.daemon {
				want := "plan " + id + " needs an approval by someone other than alice (who planned it) before it is sent to " +
					prodURL + " (production)"
				if code != 1 || !strings.Contains(errs, want) || !strings.Contains(errs, "`syncer job approve "+id+"`") {
					t.Fatalf("apply -confirm-production without an approval: exit %d\n%s%s", code, out, errs)
				}
				t.Logf("the refusal:\n%s", errs)
				cmds := printedCommands(errs)
				if got := strings.Join(cmds["apply"], " "); got != "job apply "+id+" -confirm-production" {
					t.Errorf("the refusal's apply command: %q\n%s", got, errs)
				}
			} else if code != 0 {
				t.Fatalf("the daemon with nothing approved: exit %d\n%s%s", code, out, errs)
			}
			if w.topups() != 0 || w.balance() != before {
				t.Fatalf("sent without an approval: %d top-ups, balance %d → %d", w.topups(), before, w.balance())
			}

			out, errs, code = w.as("alice", prod, "job", "approve", id)
			if !tc.allowSelf {
				if code != 1 || !strings.Contains(errs, "planned by alice, who may not approve it too") {
					t.Fatalf("alice approves her own plan: exit %d\n%s%s", code, out, errs)
				}
				t.Logf("alice's approval:\n%s", errs)
				// bob runs what the refusal printed, with the production service as BILLSYNC_BASE_URL.
				approve := printedCommands(errs)["approve"]
				if out, errs, code = w.as("bob", w.prod, approve...); code != 0 ||
					!strings.Contains(out, "plan "+id+" approved by bob for "+prodURL+" (PRODUCTION)") ||
					!strings.Contains(out, "`syncer job apply "+id+" -confirm-production`") {
					t.Fatalf("bob approves (%v): exit %d\n%s%s", approve, code, out, errs)
				}
			} else if code != 0 || !strings.Contains(out, "approved by alice (a self-approval") {
				t.Fatalf("a team of one approves: exit %d\n%s%s", code, out, errs)
			}
			if w.topups() != 0 {
				t.Fatal("approving sent something")
			}

			for i, want := range []int{1, 1} { // sent once, then nothing twice
				out, errs, code = send()
				if code != 0 || w.topups() != want {
					t.Fatalf("send %d after the approval: exit %d, %d top-ups\n%s%s", i+1, code, w.topups(), out, errs)
				}
			}
			if w.balance() != before+175000 {
				t.Errorf("balance %d → %d, want +175000 once", before, w.balance())
			}
			out, _, _ = w.as("alice", prod, "job", "show", id)
			approver := map[bool]string{false: "by bob on", true: "by alice on"}[tc.allowSelf]
			for _, want := range []string{"WIB by alice on", "  approved  ", approver, "  applied   "} {
				if !strings.Contains(out, want) {
					t.Errorf("job show has no %q:\n%s", want, out)
				}
			}
			if tc.allowSelf != strings.Contains(out, "a self-approval") {
				t.Errorf("job show and the self-approval:\n%s", out)
			}
		})
	}
}

// TestRequireApprovalOnTheSimulatorAsPeopleRunIt: BILLSYNC_REQUIRE_APPROVAL=true holds a plan for the
// simulator (not production) until another login approves it; the refusal's commands run as printed.
func TestRequireApprovalOnTheSimulatorAsPeopleRunIt(t *testing.T) {
	w := newFourEyesWorld(t, t.TempDir())
	vars := w.with(map[string]string{"BILLSYNC_REQUIRE_APPROVAL": "true"})
	id := w.plan("alice", vars)
	out, errs, code := w.as("alice", vars, "job", "apply", id)
	if code != 1 || !strings.Contains(errs, "before it is sent to "+w.vars["BILLSYNC_BASE_URL"]+" (not production), as BILLSYNC_REQUIRE_APPROVAL=true") {
		t.Fatalf("apply without an approval, approval required: exit %d\n%s%s", code, out, errs)
	}
	cmds := printedCommands(errs)
	if w.topups() != 0 || strings.Join(cmds["apply"], " ") != "job apply "+id {
		t.Fatalf("%d top-ups; the refusal's commands: %v", w.topups(), cmds)
	}
	if out, errs, code = w.as("bob", vars, cmds["approve"]...); code != 0 || !strings.Contains(out, "(not production)") {
		t.Fatalf("bob approves: exit %d\n%s%s", code, out, errs)
	}
	for i := range 2 {
		if out, errs, code = w.as("alice", vars, cmds["apply"]...); code != 0 || w.topups() != 1 {
			t.Fatalf("apply %d after the approval: exit %d, %d top-ups\n%s%s", i+1, code, w.topups(), out, errs)
		}
	}
}

// TestLoginIsTheUidNotUSER runs the commands as a team does in a container (docker exec --user UID:GID),
// with uids that have no passwd entry sharing the data folder through one group (chmod 2770, umask 007):
// uid 4242 plans as USER=alice and approves as USER=bob, which is refused as a self-approval (both are
// uid:4242), and the daemon (uid 10001) sends nothing; uid 4243 approves, and then the daemon sends it once.
// Switching uids needs root: the test skips otherwise.
func TestLoginIsTheUidNotUSER(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("running a command under another uid (SysProcAttr.Credential) needs root; " +
			"TestFourEyesAsPeopleRunIt and jobs.TestLoginIsTheUidsAccountNeverUSER cover the rest")
	}
	const group, daemonUID = 4200, 10001
	for _, uid := range []int{4242, 4243} {
		if u, err := user.LookupId(strconv.Itoa(uid)); err == nil {
			t.Skipf("uid %d has a passwd entry here (%s): the test needs uids without one", uid, u.Username)
		}
	}
	// The shared data folder (t.TempDir's parents are root's alone), holding a copy of this test binary: the
	// command under test, which the group may run.
	dir, err := os.MkdirTemp("", "billsync-uid-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chown(dir, daemonUID, group); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o2770|os.ModeSetgid); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "syncer")
	self, err := os.ReadFile(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, self, 0o755); err != nil {
		t.Fatal(err)
	}
	w := newFourEyesWorld(t, dir)
	// The warehouse is the daemon's, as if its first sync had made it.
	filepath.Walk(dir, func(p string, _ os.FileInfo, err error) error {
		if err == nil {
			os.Lchown(p, daemonUID, group)
		}
		return err
	})
	runAs := func(uid int, user string, args ...string) (string, string, int) {
		t.Helper()
		// Each person's shell: their own uid, the team's group, umask 007 so the group can write what they create.
		cmd := exec.Command("/bin/sh", append([]string{"-c", `umask 007 && exec "$0" "$@"`, bin}, args...)...)
		cmd.Env = []string{"SYNCER_TEST_MAIN=1", "USER=" + user, "LOGNAME=" + user, "HOME=" + dir, "PATH=/usr/bin:/bin"}
		for k, v := range w.vars {
			cmd.Env = append(cmd.Env, k+"="+v)
		}
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: group}}
		var o, e strings.Builder
		cmd.Stdout, cmd.Stderr, cmd.Dir = &o, &e, dir
		err := cmd.Run()
		var ee *exec.ExitError
		code := 0
		switch {
		case errors.As(err, &ee):
			code = ee.ExitCode()
		case err != nil:
			t.Fatalf("run as uid %d: %v", uid, err)
		}
		return o.String(), e.String(), code
	}

	out, errs, code := runAs(4242, "alice", "job", "plan", "-kind", "credit-topup", "-in", w.in)
	m := regexp.MustCompile(`syncer job apply ([0-9a-f]{12})`).FindStringSubmatch(out)
	if code != 0 || m == nil || !strings.Contains(out, "by uid:4242 on") {
		t.Fatalf("plan as uid 4242 (USER=alice): exit %d\n%s%s", code, out, errs)
	}
	id := m[1]
	out, errs, code = runAs(4242, "bob", "job", "approve", id)
	if code != 1 || !strings.Contains(errs, "planned by uid:4242, who may not approve it too") {
		t.Fatalf("approve as uid 4242 (USER=bob): exit %d\n%s%s", code, out, errs)
	}
	daemon := func() {
		t.Helper()
		if out, errs, code := runAs(daemonUID, "billsync", "-once", "-apply-approved"); code != 0 {
			t.Fatalf("the daemon's run: exit %d\n%s%s", code, out, errs)
		}
	}
	daemon()
	if w.topups() != 0 {
		t.Fatalf("the daemon sent a plan uid 4242 approved itself as USER=bob")
	}
	if out, errs, code = runAs(4243, "alice", "job", "approve", id); code != 0 || !strings.Contains(out, "approved by uid:4243 for") {
		t.Fatalf("approve as uid 4243: exit %d\n%s%s", code, out, errs)
	}
	daemon()
	daemon()
	if w.topups() != 1 {
		t.Fatalf("%d top-ups after uid 4243's approval, want 1", w.topups())
	}
	// uid 4243 plans a file of their own: its plan files go where uid 4242's went (data/jobs/).
	other := filepath.Join(dir, "other.csv")
	if err := os.WriteFile(other, []byte("customerId,productId,amount\n"+w.customer+","+w.product+",5000\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, errs, code = runAs(4243, "siti", "job", "plan", "-kind", "credit-topup", "-in", other); code != 0 ||
		!strings.Contains(out, "by uid:4243 on") {
		t.Fatalf("plan as uid 4243 after uid 4242: exit %d\n%s%s", code, out, errs)
	}
	daemonLogin := "uid:" + strconv.Itoa(daemonUID)
	if u, err := user.LookupId(strconv.Itoa(daemonUID)); err == nil {
		daemonLogin = u.Username
	}
	out, _, _ = runAs(4243, "bob", "job", "show", id)
	for _, want := range []string{"WIB by uid:4242 on", "by uid:4243 on", "by syncer daemon as " + daemonLogin + " on"} {
		if !strings.Contains(out, want) {
			t.Errorf("job show has no %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "a self-approval") || strings.Contains(out, "alice") || strings.Contains(out, "bob") {
		t.Errorf("job show names $USER or a self-approval:\n%s", out)
	}
}
