package queries

import (
	"regexp"
	"strings"
	"testing"
	"testing/fstest"
)

// TestLoadMacros: a macro comes after the macros its statement calls, whatever the file names'
// order (comments do not count), report_zone first; a file creating anything but the one object
// it is named after, or macros calling each other round, fail the load.
func TestLoadMacros(t *testing.T) {
	file := func(s string) *fstest.MapFile { return &fstest.MapFile{Data: []byte(s)} }
	ms, err := loadMacros(fstest.MapFS{
		"macros/a_outer.sql": file("-- a_outer: calls z_inner\nCREATE OR REPLACE MACRO a_outer(x) AS z_inner(x) + 1;\n"),
		"macros/m_view.sql":  file("CREATE OR REPLACE VIEW m_view AS SELECT a_outer(1) AS v, report_zone() AS z;\n"),
		"macros/z_inner.sql": file("-- not b_other: a comment does not order\nCREATE OR REPLACE MACRO z_inner(x) AS x * 2;\n"),
		"macros/b_other.sql": file("CREATE OR REPLACE MACRO b_other(x) AS x;\n"),
	})
	if err != nil {
		t.Fatal(err)
	}
	var order []string
	for _, m := range ms {
		order = append(order, m.Name)
		if strings.HasSuffix(m.SQL, ";") {
			t.Errorf("%s: statement keeps its semicolon", m.Name)
		}
	}
	if got, want := strings.Join(order, " "), "report_zone z_inner a_outer b_other m_view"; got != want {
		t.Errorf("order %s, want %s", got, want)
	}

	for name, fsys := range map[string]fstest.MapFS{
		"named otherwise":      {"macros/a.sql": file("CREATE OR REPLACE MACRO b(x) AS x;")},
		"two statements":       {"macros/a.sql": file("CREATE OR REPLACE MACRO a(x) AS x;\nCREATE OR REPLACE MACRO a2(x) AS x;")},
		"no CREATE OR REPLACE": {"macros/a.sql": file("CREATE MACRO a(x) AS x;")},
		"a cycle": {
			"macros/a.sql": file("CREATE OR REPLACE MACRO a(x) AS b(x);"),
			"macros/b.sql": file("CREATE OR REPLACE MACRO b(x) AS a(x);"),
		},
		"report_zone again": {"macros/report_zone.sql": file("CREATE OR REPLACE MACRO report_zone() AS 'UTC';")},
	} {
		if _, err := loadMacros(fsys); err == nil {
			t.Errorf("%s: loaded", name)
		}
	}
}

// TestTemporary: the reader's copy of a statement creates a TEMP object of the same name.
func TestTemporary(t *testing.T) {
	for _, m := range Macros {
		got := temporary(m.SQL)
		if !regexp.MustCompile(`(?m)^CREATE OR REPLACE TEMP (MACRO|VIEW) `+m.Name+`\b`).MatchString(got) || createRe.MatchString(got) {
			t.Errorf("%s: not made temporary:\n%s", m.Name, got)
		}
	}
	if len(Macros) < 10 {
		t.Errorf("%d report macros", len(Macros))
	}
}
