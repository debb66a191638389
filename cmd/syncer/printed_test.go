package main

import (
	"flag"
	"testing"

	"github.com/billsync/billsync/internal/cli/clitest"
)

// syncerGrammar is syncer's command line: its real flag sets (the daemon's and each job
// subcommand's) and the arguments each takes.
func syncerGrammar() *clitest.Command {
	job := func(sub string, min, max int) *clitest.Command {
		c := &clitest.Command{Min: min, Max: max, Flags: func() *flag.FlagSet { return (&jobFlags{}).flagSet(sub) }}
		if sub == "resolve" {
			c.Literal = func(w string) bool { return w == "applied" || w == "not-applied" }
		}
		return c
	}
	return &clitest.Command{Flags: func() *flag.FlagSet { return (&config{}).flagSet() },
		Sub: map[string]*clitest.Command{"job": {Flags: func() *flag.FlagSet { return flag.NewFlagSet("syncer job", flag.ContinueOnError) },
			Sub: map[string]*clitest.Command{"plan": job("plan", 0, 0), "apply": job("apply", 0, 1), "approve": job("approve", 1, 1),
				"resolve": job("resolve", 3, 3), "show": job("show", 1, 1), "list": job("list", 0, 0), "products": job("products", 0, 0)}},
			"lake": {Flags: func() *flag.FlagSet { return flag.NewFlagSet("syncer lake", flag.ContinueOnError) },
				Sub: map[string]*clitest.Command{"maintain": {Flags: func() *flag.FlagSet { return (&lakeConfig{}).flagSet() }}}}}}
}

// TestPrintedSyncerCommandsParse: every "syncer ..." command line in the source's strings (an
// alert, a hint, a log line, a usage text, a job's result) parses with syncer's own flag sets
// and takes the arguments the command takes.
func TestPrintedSyncerCommandsParse(t *testing.T) {
	clitest.CheckPrinted(t, "syncer", syncerGrammar(), 20, []clitest.Case{
		{Line: "syncer job resolve %s %d applied -why", OK: false},
		{Line: "syncer job show", OK: true}, // a command named, not a line to run
		{Line: "syncer job show PLAN_ID PLAN_ID", OK: false},
		{Line: "syncer -once -nope", OK: false},
		{Line: `syncer job resolve %s %d %s -why "..."`, OK: true},
		{Line: "syncer job plan -kind KIND -in FILE -again", OK: true},
		{Line: "syncer -now", OK: true},
	})
}
