package main

import (
	"strings"
	"testing"

	"github.com/billsync/billsync/internal/jobs"
)

// TestJobUsageNamesEveryKind: the usage's kinds come from the registry, wrapped within 100 columns.
func TestJobUsageNamesEveryKind(t *testing.T) {
	_, list, ok := strings.Cut(jobUsage, "\nkinds: ")
	if !ok {
		t.Fatalf("no kinds in the usage:\n%s", jobUsage)
	}
	named := map[string]bool{}
	for _, f := range strings.FieldsFunc(list, func(r rune) bool { return r == ',' || r == ' ' || r == '\n' }) {
		named[f] = true
	}
	for _, k := range jobs.Kinds() {
		if !named[string(k)] {
			t.Errorf("the usage does not name kind %s:\n%s", k, jobUsage)
		}
	}
	for _, line := range strings.Split(kindsLine(append(jobs.Kinds(), jobs.Kinds()...)), "\n") {
		if len(line) > 100 {
			t.Errorf("a usage line of %d columns: %q", len(line), line)
		}
	}
}
