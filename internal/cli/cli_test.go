package cli

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"strings"
	"testing"
)

func TestExit(t *testing.T) {
	newFS := func() *flag.FlagSet {
		fs := flag.NewFlagSet("tool", flag.ContinueOnError)
		fs.Int("n", 1, "how many")
		fs.Usage = func() { fmt.Fprintln(fs.Output(), "usage: tool [-n N]"); fs.PrintDefaults() }
		return fs
	}
	for _, tc := range []struct {
		name             string
		args             []string
		check            func(*flag.FlagSet) error
		code             int
		stdout, stderr   string
		noStdout, noErrs bool
	}{
		{name: "-h", args: []string{"-h"}, code: 0, stdout: "usage: tool", noErrs: true},
		{name: "--help", args: []string{"--help"}, code: 0, stdout: "how many", noErrs: true},
		{name: "unknown flag", args: []string{"-x"}, code: 2, stderr: "tool: flag provided but not defined: -x\nrun 'tool -h' for the flags and their environment variables\n", noStdout: true},
		{name: "bad value", args: []string{"-n", "a"}, code: 2, stderr: "invalid value", noStdout: true},
		{name: "validation", args: nil, check: func(fs *flag.FlagSet) error { return Usage(fs, errors.New("-n must be positive")) },
			code: 2, stderr: "tool: -n must be positive\nrun 'tool -h' for the flags and their environment variables\n", noStdout: true},
		{name: "failure", args: nil, check: func(*flag.FlagSet) error { return errors.New("boom") }, code: 1, stderr: "tool: boom\n", noStdout: true},
		{name: "several problems", args: nil, check: func(*flag.FlagSet) error {
			return errors.Join(errors.New("account a: no key"), errors.New("account b: no key"))
		}, code: 1, stderr: "tool: account a: no key\naccount b: no key\n", noStdout: true},
		{name: "ok", args: []string{"-n", "2"}, code: 0, noStdout: true, noErrs: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fs := newFS()
			err := Parse(fs, tc.args)
			if err == nil && tc.check != nil {
				err = tc.check(fs)
			}
			var out, errOut bytes.Buffer
			code := Exit("tool", err, &out, &errOut)
			if code != tc.code || !strings.Contains(out.String(), tc.stdout) || !strings.Contains(errOut.String(), tc.stderr) ||
				code == 2 && strings.Count(errOut.String(), "\n") != 2 ||
				tc.noStdout && out.Len() > 0 || tc.noErrs && errOut.Len() > 0 {
				t.Errorf("exit %d, stdout %q, stderr %q", code, out.String(), errOut.String())
			}
		})
	}
}
