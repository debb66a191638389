package jobs_test

import (
	"context"
	"errors"
	"os"
	"os/user"
	"strconv"
	"strings"
	"testing"

	"github.com/billsync/billsync/internal/jobs"
)

// TestLoginIsTheUidsAccountNeverUSER: the login is the name the OS gives the uid; a uid without one is
// uid:N whatever $USER and $LOGNAME say, so one uid cannot plan as alice and approve as bob.
func TestLoginIsTheUidsAccountNeverUSER(t *testing.T) {
	t.Setenv("USER", "bob")
	t.Setenv("LOGNAME", "bob")
	for _, tc := range []struct {
		name   string
		lookup func(string) (*user.User, error)
		want   string
	}{
		{"a passwd entry", func(id string) (*user.User, error) { return &user.User{Uid: id, Username: "alice"}, nil }, "alice"},
		{"no passwd entry", func(id string) (*user.User, error) {
			n, _ := strconv.Atoi(id)
			return nil, user.UnknownUserIdError(n)
		}, "uid:4242"},
		{"the lookup fails", func(string) (*user.User, error) { return nil, errors.New("nss: connection refused") }, "uid:4242"},
		{"an entry without a name", func(id string) (*user.User, error) { return &user.User{Uid: id}, nil }, "uid:4242"},
		{"another uid's entry", func(string) (*user.User, error) { return &user.User{Uid: "0", Username: "root"}, nil }, "uid:4242"},
	} {
		if got := jobs.LoginOf(4242, tc.lookup); got != tc.want {
			t.Errorf("%s: LoginOf(4242) = %q, want %q", tc.name, got, tc.want)
		}
	}
	want := "uid:" + strconv.Itoa(os.Getuid())
	if u, err := user.LookupId(strconv.Itoa(os.Getuid())); err == nil && u.Username != "" {
		want = u.Username
	}
	if got := jobs.Login(); got != want || got == "bob" {
		t.Errorf("Login() = %q with USER=bob, want %q (the uid's account)", got, want)
	}
}

// TestFourEyesOnEveryPathToProduction: with the simulator treated as production, a person's sequence on the
// hand path (Apply with -confirm-production) and the daemon's (ApplyApproved): alice plans; sending without
// an approval is refused with the command to run and nothing reaches the service; alice's own approval is
// refused; bob approves; then alice's send goes out once, and again sends nothing twice. With
// BILLSYNC_ALLOW_SELF_APPROVE alice approves herself (journaled as a self-approval) and the plan is sent
// while the setting holds where it is sent.
func TestFourEyesOnEveryPathToProduction(t *testing.T) {
	for _, tc := range []struct {
		name      string
		daemon    bool
		allowSelf bool
	}{
		{"apply -confirm-production", false, false},
		{"the daemon", true, false},
		{"apply -confirm-production, a team of one", false, true},
		{"the daemon, a team of one", true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			ctx := context.Background()
			cs, p := e.customers(1), e.product(creditUsage)
			before := make([]int64, 1)
			before[0], _ = e.balance(cs[0].ID, p.ID)
			plan := e.mustPlan(jobs.CreditTopup, e.file("topup.csv", "customerId,productId,amount", cs[0].ID+","+p.ID+",175000"),
				func(o *jobs.PlanOptions) { o.User = "alice" })
			adds := func() int { return e.posts("/credit/v1/credit/customer/add-credit") }
			send := func(as string) (*jobs.RunResult, error) {
				t.Helper()
				set := func(o *jobs.ApplyOptions) {
					o.User, o.Production, o.Confirmed, o.AllowSelfApprove = as, true, true, tc.allowSelf
				}
				if !tc.daemon {
					return e.applyWith(plan.ID, testKey, set)
				}
				o := jobs.ApplyOptions{Client: e.client(testKey), Account: "test", BaseURL: e.srv.URL, Now: e.sb.Now}
				set(&o)
				o.Confirmed = false // the daemon confirms by the approval, never by a flag
				res, err := jobs.ApplyApproved(ctx, e.journal, o)
				for _, r := range res {
					if r.Status == jobs.RunRefused {
						return r, errors.New(r.Refused)
					}
				}
				if len(res) == 0 {
					return &jobs.RunResult{Status: jobs.RunNothingToDo}, err
				}
				return res[0], err
			}
			approve := func(by string) (*jobs.Plan, error) {
				j := e.open()
				defer j.Close()
				o := jobs.ApproveOptions{By: by, Account: "test", BaseURL: e.srv.URL, Production: true, Summary: "shown"}
				o.AllowSelfApprove = tc.allowSelf
				return j.Approve(ctx, plan.ID, o)
			}

			// Not approved: refused with the command to run (the hand path), or not even considered (the
			// daemon sends approved plans only); the service sees nothing.
			res, err := send("alice")
			if !tc.daemon {
				want := "plan " + plan.ID + " needs an approval by someone other than alice (who planned it)"
				if !errors.Is(err, jobs.ErrNeedsApproval) || !strings.Contains(err.Error(), want) ||
					!strings.Contains(err.Error(), "`syncer job approve "+plan.ID+"` with BILLSYNC_BASE_URL="+e.srv.URL) ||
					!strings.Contains(err.Error(), "`syncer job apply "+plan.ID+" -confirm-production` sends it") {
					t.Fatalf("apply -confirm-production without an approval: %v, %+v", err, res)
				}
			} else if err != nil || res.Status != jobs.RunNothingToDo {
				t.Fatalf("the daemon with no approved plan: %v %+v", err, res)
			}
			if n := adds(); n != 0 {
				t.Fatalf("%d top-ups sent without an approval", n)
			}
			if got, _ := e.balance(cs[0].ID, p.ID); got != before[0] {
				t.Fatalf("balance %d, want %d: credit added without an approval", got, before[0])
			}

			// alice approves her own plan.
			_, err = approve("alice")
			if !tc.allowSelf {
				if !errors.Is(err, jobs.ErrSelfApproval) || !strings.Contains(err.Error(), "`syncer job approve "+plan.ID+"`") {
					t.Fatalf("alice approving her own plan: %v", err)
				}
				if _, err := approve("bob"); err != nil {
					t.Fatalf("bob approves: %v", err)
				}
			} else if err != nil {
				t.Fatalf("a team of one approving: %v", err)
			}
			j := e.open()
			var by string
			var self bool
			err = j.DB().QueryRow(`SELECT approved_by, self_approved FROM job_approvals WHERE plan_id = ?`, plan.ID).Scan(&by, &self)
			j.Close()
			if wantBy := map[bool]string{false: "bob", true: "alice"}[tc.allowSelf]; err != nil || by != wantBy || self != tc.allowSelf {
				t.Fatalf("journaled approval: %v by %s self_approved=%v, want %s %v", err, by, self, wantBy, tc.allowSelf)
			}

			if tc.allowSelf {
				// Where it is sent without BILLSYNC_ALLOW_SELF_APPROVE, the self-approval does not count.
				tc.allowSelf = false
				res, err = send("alice")
				if err == nil || !strings.Contains(err.Error(), "a self-approval") ||
					!strings.Contains(err.Error(), "BILLSYNC_ALLOW_SELF_APPROVE is not true here") || adds() != 0 {
					t.Fatalf("a self-approval sent without the setting: %v %+v, %d sends", err, res, adds())
				}
				tc.allowSelf = true
			}
			res, err = send("alice")
			if err != nil || res.Status != jobs.RunCompleted || res.Sent != 1 || adds() != 1 {
				t.Fatalf("approved send: %v %+v, %d top-ups", err, res, adds())
			}
			assertOnce(e, cs[:1], p, before[:1], 175000)
			res, err = send("alice")
			if err != nil || res.Status != jobs.RunNothingToDo || adds() != 1 {
				t.Fatalf("sending again: %v %+v, %d top-ups", err, res, adds())
			}
		})
	}
}

// TestApprovalIsForOneService: bob's approval for the simulator does not send the plan to production (by
// hand or by the daemon); the refusal names the command, and after it bob's approval for production does.
func TestApprovalIsForOneService(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	plan, cs, p, before := topupPlan(e, 99000)
	j := e.open()
	if _, err := j.Approve(ctx, plan.ID, jobs.ApproveOptions{By: "bob", Account: "test", BaseURL: e.srv.URL}); err != nil {
		t.Fatal(err)
	}
	j.Close()
	toProduction := func(o *jobs.ApplyOptions) { o.Production, o.Confirmed = true, true }
	_, err := e.applyWith(plan.ID, testKey, toProduction)
	want := "approved by bob for " + e.srv.URL + " (not production), not for " + e.srv.URL + " (production)"
	if !errors.Is(err, jobs.ErrNeedsApproval) || !strings.Contains(err.Error(), want) ||
		!strings.Contains(err.Error(), "`syncer job approve "+plan.ID+"` with BILLSYNC_BASE_URL="+e.srv.URL) {
		t.Fatalf("production with an approval for the simulator: %v", err)
	}
	if n := e.posts("/credit/v1/credit/customer/add-credit"); n != 0 {
		t.Fatalf("%d top-ups sent", n)
	}
	j = e.open()
	again, err := j.Approve(ctx, plan.ID, jobs.ApproveOptions{By: "bob", Account: "test", BaseURL: e.srv.URL, Production: true})
	j.Close()
	if err != nil || len(again.Approvals) != 2 || again.ApprovalFor(e.srv.URL, true) == nil || again.ApprovalFor(e.srv.URL, false) == nil {
		t.Fatalf("approving for production too: %v %+v", err, again)
	}
	if res := e.apply(plan.ID, toProduction); res.Status != jobs.RunCompleted {
		t.Fatalf("approved for production: %+v", res)
	}
	assertOnce(e, cs, p, before, 99000)
	var hist strings.Builder
	jobs.PrintHistory(&hist, again, nil, nil, jobs.FileOptions{})
	for _, want := range []string{" for " + e.srv.URL + " (not production)\n", " for " + e.srv.URL + " (production)\n"} {
		if !strings.Contains(hist.String(), want) || strings.Count(hist.String(), "  approved  ") != 2 {
			t.Errorf("job show's history has no %q:\n%s", want, hist.String())
		}
	}
}

// TestRequireApprovalOnTheSimulator: by default a plan goes to the simulator without an approval (the
// demo workflow); BILLSYNC_REQUIRE_APPROVAL=true makes it wait for another login's approval there too.
func TestRequireApprovalOnTheSimulator(t *testing.T) {
	t.Run("default", func(t *testing.T) {
		e := newEnv(t)
		plan, cs, p, before := topupPlan(e, 1000)
		if res := e.apply(plan.ID); res.Status != jobs.RunCompleted {
			t.Fatalf("the simulator without an approval: %+v", res)
		}
		assertOnce(e, cs, p, before, 1000)
	})
	t.Run("BILLSYNC_REQUIRE_APPROVAL", func(t *testing.T) {
		e := newEnv(t)
		plan, cs, p, before := topupPlan(e, 2000)
		require := func(o *jobs.ApplyOptions) { o.RequireApproval = true }
		_, err := e.applyWith(plan.ID, testKey, require)
		if !errors.Is(err, jobs.ErrNeedsApproval) || !strings.Contains(err.Error(), "BILLSYNC_REQUIRE_APPROVAL=true") ||
			!strings.Contains(err.Error(), "`syncer job apply "+plan.ID+"` sends it") {
			t.Fatalf("the simulator without an approval, approval required: %v", err)
		}
		if n := e.posts("/credit/v1/credit/customer/add-credit"); n != 0 {
			t.Fatalf("%d top-ups sent", n)
		}
		j := e.open()
		if _, err := j.Approve(context.Background(), plan.ID, jobs.ApproveOptions{By: "siti", Account: "test", BaseURL: e.srv.URL}); err != nil {
			t.Fatal(err)
		}
		j.Close()
		if res := e.apply(plan.ID, require); res.Status != jobs.RunCompleted {
			t.Fatalf("approved: %+v", res)
		}
		assertOnce(e, cs, p, before, 2000)
	})
}
