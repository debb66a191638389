package clitest

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// RunChild runs the command under test as a person would start it: this test binary again, in
// the child mode its TestMain enters when the variable marker is 1, with exactly env (none of the
// test's own BILLSYNC_ variables). It returns the exit status and standard error.
func RunChild(t *testing.T, marker string, env map[string]string, args ...string) (int, string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = []string{marker + "=1"}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "BILLSYNC_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		return exit.ExitCode(), stderr.String()
	case err != nil:
		t.Fatal(err)
	}
	return 0, stderr.String()
}
