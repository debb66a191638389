package config_test

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/billsync/billsync/internal/config"
)

var codeRe = regexp.MustCompile("`([^`]*)`")

// tableRows maps each variable in the markdown tables of file to the backticked texts of its row.
func tableRows(t *testing.T, file string) map[string][]string {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string][]string{}
	for _, line := range strings.Split(string(b), "\n") {
		if !strings.HasPrefix(line, "|") {
			continue
		}
		var codes, keys []string
		for _, cell := range strings.Split(line, "|") {
			first := len(keys) == 0 // the row's variables are those of the first cell naming any
			for _, m := range codeRe.FindAllStringSubmatch(cell, -1) {
				codes = append(codes, m[1])
				if first && strings.HasPrefix(m[1], "BILLSYNC_") {
					keys = append(keys, m[1])
				}
			}
		}
		for _, k := range keys {
			rows[k] = codes
		}
	}
	return rows
}

// TestDocsTables: the configuration tables people read list the options as declared: the
// README every option (the syncer reads them all), docs/reports.md report's, each with its
// flag and default.
func TestDocsTables(t *testing.T) {
	type reportOpts struct {
		config.Files
		config.Scope
		config.Report
	}
	for file, opts := range map[string][]config.Option{
		"../../README.md":       config.Options(&all{}),
		"../../docs/reports.md": config.Options(&reportOpts{}),
	} {
		rows := tableRows(t, file)
		for _, o := range opts {
			row, ok := rows[o.Env]
			if !ok {
				t.Errorf("%s: no table row for %s", file, o.Env)
				continue
			}
			if o.Flag != "" && !contains(row, "-"+o.Flag) {
				t.Errorf("%s: the row of %s does not show `-%s`: %q", file, o.Env, o.Flag, row)
			}
			if o.Default != "" && !contains(row, o.Default) {
				t.Errorf("%s: the row of %s does not show its default `%s`: %q", file, o.Env, o.Default, row)
			}
		}
	}
}

func contains(codes []string, s string) bool {
	for _, c := range codes {
		if c == s {
			return true
		}
	}
	return false
}
