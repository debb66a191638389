package report

import (
	"strings"
	"testing"

	"github.com/billsync/billsync/queries"
)

// TestHeadlineDefinitionErrors: a headline table with more figures than the summary has
// columns for, or a count_where that cannot count, is refused when the definition loads, with
// what is wrong.
func TestHeadlineDefinitionErrors(t *testing.T) {
	const head = `name: x
title: {id: X, en: X}
description: {id: X, en: X}
sheets:
  - name: S
    title: {id: S, en: S}
    query: credit_by_product.sql
`
	const cols = `    columns:
      - {name: product_name, title: {id: P, en: P}}
`
	figure := func(n string) string {
		return "      - {name: " + n + ", title: {id: " + n + ", en: " + n + "}, format: int}\n"
	}
	for _, tc := range []struct{ name, yaml, want string }{
		{"six figures", head + "    headline: true\n    headline_table: true\n" + cols +
			figure("customers") + figure("opening") + figure("credits") + figure("debits") + figure("closing") + figure("mismatches"),
			"headline_table: 6 figures, the summary's table has room for 5"},
		{"five figures", head + "    headline: true\n    headline_table: true\n" + cols +
			figure("customers") + figure("opening") + figure("credits") + figure("debits") + figure("closing"), ""},
		{"count_where without count", head + "    count_where: {column: product_name, values: [a]}\n" + cols, "count_where: without count"},
		{"count_where of no column", head + "    count: {id: N, en: N}\n    count_where: {column: nope, values: [a]}\n" + cols, `column "nope" is not a column`},
		{"count_where", head + "    count: {id: N, en: N}\n    count_where: {column: product_name, values: [a]}\n" + cols, ""},
	} {
		_, err := parseDefinition([]byte(tc.yaml), queries.FS)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: error %v, want %q", tc.name, err, tc.want)
		}
	}
}
