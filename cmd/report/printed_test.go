package main

import (
	"flag"
	"slices"
	"testing"

	"github.com/billsync/billsync/internal/cli/clitest"
	"github.com/billsync/billsync/internal/report"
)

// reportGrammar is report's command line: its real flag sets, report names as arguments,
// deliver with one delivery name.
func reportGrammar(t *testing.T) *clitest.Command {
	t.Helper()
	defs, err := report.Definitions()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, d := range defs {
		names = append(names, d.Name)
	}
	sub := func(name string, min, max int) *clitest.Command {
		return &clitest.Command{Min: min, Max: max, Flags: func() *flag.FlagSet {
			var f deliverFlags
			var c deliverConfig
			return f.flagSet(name, &c)
		}, Literal: func(w string) bool { return w == "daily" || w == "month-end" }} // deliveries.example.yaml
	}
	return &clitest.Command{Max: -1, Literal: func(w string) bool { return slices.Contains(names, w) },
		Flags: func() *flag.FlagSet {
			c := config{vars: varFlags{}}
			return c.flagSet()
		},
		Sub: map[string]*clitest.Command{"deliver": sub("deliver", 1, 1), "deliveries": sub("deliveries", 0, 1)}}
}

// TestPrintedReportCommandsParse: every "report ..." command line in the source's strings (an
// alert, an e-mail, a hint, a log line, a usage text) parses with report's own flag sets and
// takes the arguments the command takes. The data-quality alert told operators to run
// "report -name data-quality", a flag report does not have.
func TestPrintedReportCommandsParse(t *testing.T) {
	clitest.CheckPrinted(t, "report", reportGrammar(t), 20, []clitest.Case{
		{Line: "report -name data-quality writes the list", OK: false},
		{Line: "report deliver -again", OK: false},
		{Line: "report deliver NAME -as-of", OK: false},
		{Line: "report deliveries NAME OTHER", OK: false},
		{Line: "report deliveries -n many", OK: false},
		{Line: "report data-quality writes the list.", OK: true},
		{Line: "report deliver NAME -as-of DATE sends one", OK: true},
		{Line: "report deliver %s -as-of %s -again", OK: true},
		{Line: "report deliveries %s; -again sends it once more", OK: true},
		{Line: "report -list)", OK: true},
	})
}
