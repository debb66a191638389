package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/billsync/billsync/internal/sandbox"
)

func TestMain(m *testing.M) {
	// Child mode: the test binary runs as the real command.
	if os.Getenv("SANDBOX_TEST_MAIN") == "1" {
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestRunServesAndStops starts the command on a free port, calls it with the
// printed key, and stops it with SIGTERM.
func TestRunServesAndStops(t *testing.T) {
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- run([]string{"-addr", "127.0.0.1:0", "-scale", "0.05", "-key", "K", "-admin", "-now", "2025-09-01T00:00:00Z"}, pw, io.Discard)
		pw.Close()
	}()
	sc := bufio.NewScanner(pr)
	var base string
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "billing sandbox at "); ok {
			base = rest
			break
		}
	}
	if base == "" {
		t.Fatalf("no address printed: %v", <-done)
	}
	go io.Copy(io.Discard, pr)
	req, _ := http.NewRequest("GET", base+"/hl/v1/customer", nil)
	req.Header.Set("Authorization", "Bearer K")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("Date") != "Mon, 01 Sep 2025 00:00:00 GMT" {
		t.Errorf("status %d, Date %q", resp.StatusCode, resp.Header.Get("Date"))
	}
	if err := syscall.Kill(syscall.Getpid(), syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("run returned %v after SIGTERM", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("did not stop on SIGTERM")
	}
}

func TestRunRejectsBadFlags(t *testing.T) {
	for _, args := range [][]string{{"-now", "yesterday"}, {"-scale", "-1"}, {"-fault-5xx", "0.8", "-fault-reset", "0.8"}, {"-list-order", "oldest"}, {"-nope"}} {
		if err := run(append(args, "-addr", "127.0.0.1:0"), io.Discard, io.Discard); err == nil {
			t.Errorf("%v accepted", args)
		}
	}
}

// TestLiveClockRuns: by default the simulated clock runs with the wall clock, so a client that
// compares the service's time with its own (write reconciliation does) sees time pass; -clock
// frozen keeps it still, and anything else is refused.
func TestLiveClockRuns(t *testing.T) {
	s, err := sandbox.New(sandbox.Options{Seed: 1, Scale: 0.01, Now: time.Date(2025, 9, 1, 0, 0, 0, 0, time.UTC)})
	if err != nil {
		t.Fatal(err)
	}
	before := s.Now()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { runClock(ctx, s, 5*time.Millisecond); close(done) }()
	wall := time.Now()
	for s.Now().Sub(before) < 20*time.Millisecond {
		time.Sleep(5 * time.Millisecond)
	}
	cancel()
	<-done
	// the simulated time moved no further than the wall clock did
	if moved, elapsed := s.Now().Sub(before), time.Since(wall); moved > elapsed+10*time.Millisecond {
		t.Errorf("the simulated clock moved %v in %v of wall time", moved, elapsed)
	}
	if err := run([]string{"-clock", "stopped"}, io.Discard, io.Discard); err == nil || !strings.Contains(err.Error(), "live or frozen") {
		t.Errorf("-clock stopped: %v", err)
	}
}

// TestEveryFlagRefused walks every flag -h lists with each value it refuses: text its type
// cannot read, a negative number where none has a meaning, a 0 where it means nothing, a word
// outside its list. Each stops the simulator before it serves: exit 2, the flag named, one line
// pointing to -h (as billsync's own commands do), never the exit 1 of a failure while serving.
func TestEveryFlagRefused(t *testing.T) {
	help := exec.Command(os.Args[0], "-h")
	help.Env = append(os.Environ(), "SANDBOX_TEST_MAIN=1")
	out, err := help.Output()
	if err != nil {
		t.Fatalf("-h: %v", err)
	}
	// what a flag of each kind refuses besides what its type cannot read; "" = any text
	text := map[string]string{"addr": "nohost", "clock": "sometimes", "list-order": "oldest", "credit-times": "julian",
		"now": "yesterday", "key": sandbox.DefaultReadOnlyKey, "read-only-key": sandbox.DefaultKey, "fault-path": ""}
	negativeAllowed := map[string]bool{"seed": true, "fault-seed": true}
	zeroRefused := map[string]bool{"scale": true, "max-page-size": true}
	flagRE := regexp.MustCompile(`(?m)^  -(\S+)(?: (\w+))?$`)
	walked := 0
	for _, m := range flagRE.FindAllStringSubmatch(string(out), -1) {
		name, typ := m[1], m[2]
		var values []string
		switch typ {
		case "":
			values = []string{"=maybe"}
		case "int", "float", "duration":
			values = []string{"abc"}
			if !negativeAllowed[name] {
				values = append(values, "-1")
			}
			if zeroRefused[name] {
				values = append(values, "0")
			}
			if strings.HasPrefix(name, "fault-") && typ == "float" && name != "fault-seed" {
				values = append(values, "1.5") // a fraction
			}
		case "string":
			v, ok := text[name]
			if !ok {
				t.Errorf("-%s: a text flag this test does not know: say what it refuses", name)
			}
			if v != "" {
				values = []string{v}
			}
		default:
			t.Errorf("-%s: a %s flag this test does not know", name, typ)
		}
		for _, v := range values {
			walked++
			args := []string{"-" + name + v, "-addr", "127.0.0.1:0"}
			if !strings.HasPrefix(v, "=") {
				args = []string{"-" + name, v}
				if name != "addr" {
					args = append(args, "-addr", "127.0.0.1:0")
				}
			}
			t.Run(name+"="+v, func(t *testing.T) {
				t.Parallel()
				cmd := exec.Command(os.Args[0], args...)
				cmd.Env = append(os.Environ(), "SANDBOX_TEST_MAIN=1")
				var stderr bytes.Buffer
				cmd.Stderr = &stderr
				err := cmd.Run()
				var exit *exec.ExitError
				if !errors.As(err, &exit) || exit.ExitCode() != 2 || !strings.Contains(stderr.String(), "-"+name) ||
					!strings.Contains(stderr.String(), "run 'sandbox -h'") {
					t.Errorf("%v: %v, want exit 2 naming -%s and pointing to -h; stderr:\n%s", args, err, name, stderr.String())
				}
			})
		}
	}
	if walked < 30 {
		t.Errorf("only %d invalid values walked from -h:\n%s", walked, out)
	}
}
