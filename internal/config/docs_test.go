package config_test

import (
	"os"
	"regexp"
	"slices"
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

// TestDocsTables: the configuration tables people read list the options as declared:
// docs/configuration.md every option (the syncer reads them all), docs/reports.md report's, each
// with its flag and default; the README's table of the essential ones shows the same flag and
// default for each setting it names.
func TestDocsTables(t *testing.T) {
	type reportOpts struct {
		config.Files
		config.Scope
		config.Report
		config.LakeAccess
	}
	for file, opts := range map[string][]config.Option{
		"../../docs/configuration.md": config.Options(&all{}),
		"../../docs/reports.md":       config.Options(&reportOpts{}),
		"../../README.md":             config.Options(&all{}),
	} {
		rows := tableRows(t, file)
		essentials := file == "../../README.md"
		if essentials && len(rows) == 0 {
			t.Errorf("%s: no table of the essential settings", file)
		}
		if file != "../../docs/reports.md" {
			for env := range rows {
				if !slices.ContainsFunc(opts, func(o config.Option) bool { return o.Env == env }) {
					t.Errorf("%s: a table row for %s, which is no setting", file, env)
				}
			}
		}
		for _, o := range opts {
			row, ok := rows[o.Env]
			if !ok {
				if !essentials {
					t.Errorf("%s: no table row for %s", file, o.Env)
				}
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
