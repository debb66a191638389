package docs

import (
	"strings"
	"testing"
)

// TestParse: the convention's markers are read as documented, and a mistake in one is an error
// naming the file and line rather than a block silently skipped.
func TestParse(t *testing.T) {
	doc := "text\n```sh\nreport -list\n```\n\n  ```sh norun: needs docker\n  docker build .\n  ```\n```sql\nSELECT 1;\n```\n```\nplain\n```\n"
	bs, err := parse("x.md", []byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	if len(bs) != 4 || bs[0].lang != "sh" || bs[0].text != "report -list\n" || bs[0].line != 2 ||
		bs[1].norun != "needs docker" || bs[1].text != "docker build .\n" || bs[2].lang != "sql" || bs[3].lang != "" {
		t.Fatalf("blocks %+v", bs)
	}
	for _, tc := range []struct{ doc, want string }{
		{"```sh norun:\nx\n```\n", "x.md:1: norun needs a reason"},
		{"a\n```sh run-later\nx\n```\n", `x.md:2: unknown fence marker "run-later"`},
		{"```sh\nx\n", "x.md:1: fence never closed"},
	} {
		if _, err := parse("x.md", []byte(tc.doc)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: error %v, want %q", tc.doc, err, tc.want)
		}
	}
	for _, tc := range []struct {
		out       string
		rows, nil bool
	}{
		{"a\n-\n1\n(1 rows)\n", true, false},
		{"a\n-\n(0 rows)\n", false, true},
		{"nothing\n", false, false},
	} {
		if hasRows(tc.out) != tc.rows || zeroRows.MatchString(tc.out) != tc.nil {
			t.Errorf("%q: rows %v, zero %v", tc.out, hasRows(tc.out), zeroRows.MatchString(tc.out))
		}
	}
}
