package main

import (
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/billsync/billsync/internal/cli/clitest"
	conf "github.com/billsync/billsync/internal/config"
	"github.com/sethvargo/go-envconfig"
)

// runChild runs the built command with exactly env (clitest.RunChild).
func runChild(t *testing.T, env map[string]string, args ...string) (int, string) {
	t.Helper()
	return clitest.RunChild(t, "SYNCER_TEST_MAIN", env, args...)
}

// settingsEnv is a valid environment of the syncer: a service that refuses every key (so a run
// that gets past its settings fails at once, exit 1) and a warehouse in a temporary directory.
func settingsEnv(t *testing.T) map[string]string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, `{"message":"invalid key"}`, http.StatusUnauthorized)
	}))
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	return map[string]string{"BILLSYNC_BASE_URL": srv.URL, "BILLSYNC_API_KEY": "k", "BILLSYNC_RATE_PER_MIN": "0",
		"BILLSYNC_DB": filepath.Join(dir, "w.duckdb"), "BILLSYNC_OUTBOX": filepath.Join(dir, "outbox")}
}

func with(env map[string]string, kv ...string) map[string]string {
	out := map[string]string{}
	for k, v := range env {
		out[k] = v
	}
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i+1] == "" {
			delete(out, kv[i])
		} else {
			out[kv[i]] = kv[i+1]
		}
	}
	return out
}

// wantConfigError: exit 2, the variable named, and the one line pointing to -h.
func wantConfigError(t *testing.T, code int, stderr, env, help string) {
	t.Helper()
	if code != 2 || !strings.Contains(stderr, env) || !strings.Contains(stderr, "run '"+help+" -h'") {
		t.Errorf("exit %d, want 2 naming %s and pointing to %s -h; stderr:\n%s", code, env, help, stderr)
	}
}

// TestEverySettingRefused walks every setting the syncer and syncer job read (by reflection:
// a new setting is covered without being listed) with each value its type, its check or its
// zero rule refuses: each stops the command before it does anything, exit 2 (a supervisor does
// not retry it), naming the variable and pointing to -h. Nothing is replaced by a default: a
// duration of 0 or below where it means nothing is refused.
func TestEverySettingRefused(t *testing.T) {
	env := settingsEnv(t)
	// the control: valid settings get as far as the service, which refuses the key
	if code, stderr := runChild(t, env, "-once"); code != 1 || !strings.Contains(stderr, "check the key") {
		t.Fatalf("valid settings: exit %d, want 1 (the key refused); stderr:\n%s", code, stderr)
	}
	if code, stderr := runChild(t, env, "job", "list"); code != 0 {
		t.Fatalf("valid settings, job list: exit %d; stderr:\n%s", code, stderr)
	}
	if code, stderr := runChild(t, env, "status"); code != 3 && code != 4 {
		t.Fatalf("valid settings, status: exit %d, want 3 or 4 (a failed sync, no warehouse yet); stderr:\n%s", code, stderr)
	}
	var job jobFlags
	for _, c := range []struct {
		opts []conf.Option
		args []string
		help string
	}{
		{conf.Options(&config{}), []string{"-once"}, "syncer"},
		{append(conf.Options(&job.cfg), conf.Options(&job.approvals)...), []string{"job", "list"}, "syncer job list"},
		{conf.Options(&statusConfig{}), []string{"status"}, "syncer status"},
	} {
		walked := 0
		for _, o := range c.opts {
			for _, v := range o.Refused() {
				walked++
				t.Run(strings.Join(c.args, "_")+"/"+o.Env+"="+v, func(t *testing.T) {
					t.Parallel()
					code, stderr := runChild(t, with(env, o.Env, v), c.args...)
					wantConfigError(t, code, stderr, o.Env, c.help)
				})
			}
		}
		if walked < 20 {
			t.Errorf("%s: only %d invalid values walked: is a group missing?", c.help, walked)
		}
	}
}

// TestConfigErrorsExit2: the configuration mistakes issue 35 found exiting 1 (retried by a
// supervisor as transient), each now exit 2 with the variable to fix and the pointer to -h.
func TestConfigErrorsExit2(t *testing.T) {
	env := settingsEnv(t)
	for _, tc := range []struct {
		name string
		env  map[string]string
		args []string
		want string
	}{
		{"no key", with(env, "BILLSYNC_API_KEY", ""), []string{"-once"}, "no API key: set BILLSYNC_API_KEY or BILLSYNC_API_KEY_FILE"},
		{"no key, job apply", with(env, "BILLSYNC_API_KEY", ""), []string{"job", "resolve", "p1", "1", "applied", "-why", "checked"},
			"no API key"},
		{"unreadable key file", with(env, "BILLSYNC_API_KEY", "", "BILLSYNC_API_KEY_FILE", "/nonexistent/key"), []string{"-once"},
			`BILLSYNC_API_KEY_FILE (-api-key-file) "/nonexistent/key": cannot read the key`},
		{"no scheme", with(env, "BILLSYNC_BASE_URL", "127.0.0.1:8080"), []string{"-once"},
			`BILLSYNC_BASE_URL (-base-url) "127.0.0.1:8080": want a scheme and a host, e.g. http://127.0.0.1:8080`},
		{"rate abc", with(env, "BILLSYNC_RATE_PER_MIN", "abc"), []string{"-once"}, `BILLSYNC_RATE_PER_MIN (-rate) "abc": want a number`},
		{"settle 0s", with(env, "BILLSYNC_JOB_SETTLE", "0s"), []string{"-once"}, "BILLSYNC_JOB_SETTLE (-settle) 0s: 0 has no meaning"},
		{"settle -5m", with(env, "BILLSYNC_JOB_SETTLE", "-5m"), []string{"job", "list"}, "BILLSYNC_JOB_SETTLE (-settle) -5m0s: cannot be negative"},
		{"settle flag", env, []string{"job", "list", "-settle", "0s"}, "BILLSYNC_JOB_SETTLE (-settle) 0s"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			code, stderr := runChild(t, tc.env, tc.args...)
			help := "syncer"
			if tc.args[0] == "job" {
				help = "syncer job " + tc.args[1]
			}
			if code != 2 || !strings.Contains(stderr, tc.want) || !strings.Contains(stderr, "run '"+help+" -h'") {
				t.Errorf("exit %d, want 2 with %q and the pointer to %s -h; stderr:\n%s", code, tc.want, help, stderr)
			}
		})
	}
}

// TestEmptyVariableIsUnset: a variable set to the empty text (an empty line in a compose file)
// is unset whatever its type: a number gets its declared default, not 0 (the request limit was
// off, the page size refused).
func TestEmptyVariableIsUnset(t *testing.T) {
	var c config
	env := map[string]string{}
	for _, o := range conf.Options(&c) {
		env[o.Env] = ""
	}
	got, err := loadConfig(t.Context(), []string{"-demo"}, envconfig.MapLookuper(env))
	if err != nil {
		t.Fatal(err)
	}
	want := conf.Defaults[conf.Sync]()
	if got.RatePerMin != want.RatePerMin || got.PageSize != want.PageSize || got.Concurrency != want.Concurrency ||
		got.Details != want.Details || got.StopGrace != want.StopGrace || got.RatePerMin == 0 {
		t.Errorf("empty variables: rate %v, page size %d, concurrency %d, details %v, grace %v; want the defaults %+v",
			got.RatePerMin, got.PageSize, got.Concurrency, got.Details, got.StopGrace, want)
	}
}
