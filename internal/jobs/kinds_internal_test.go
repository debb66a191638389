package jobs

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// TestEveryKindSpecIsComplete: a kind's behaviour is the jobKind interface, which the compiler holds
// complete; what it declares as data is held here, so a kind without columns, results or a repeat key
// fails now instead of when that step is reached (a repeat check after a re-planned sheet, in the worst
// case).
func TestEveryKindSpecIsComplete(t *testing.T) {
	seen := map[Kind]bool{}
	for _, k := range Kinds() {
		s, err := kindOf(k)
		if err != nil {
			t.Fatal(err)
		}
		if k == "" || seen[k] {
			t.Errorf("kind %q: registered twice or without a name", k)
		}
		seen[k] = true
		tr := s.traits()
		if len(tr.columns) == 0 || len(tr.results) == 0 {
			t.Errorf("kind %s: incomplete spec %+v", k, tr)
		}
		cols := map[string]bool{}
		for _, c := range tr.columns {
			if c.name == "" || c.help == "" || cols[c.name] {
				t.Errorf("kind %s: column %q is unnamed, undescribed or declared twice", k, c.name)
			}
			cols[c.name] = true
		}
		for _, g := range tr.oneOf {
			for _, c := range g {
				if !cols[c] {
					t.Errorf("kind %s: one-of group %v names %q, which is not a column", k, g, c)
				}
			}
		}
		// every column given: a request as parse would make it, read back as the kind's row
		q := request{}
		for _, c := range tr.columns {
			q[c.name] = "1"
			if c.name == "expiredAt" {
				q[c.name] = "2027-01-31T03:00:00.000Z"
			}
		}
		key := s.repeatKey(q)
		if strings.HasPrefix(key, "unreadable ") {
			t.Errorf("kind %s: a request of its own columns does not read as its row: %s", k, key)
		}
		if (key == "") != tr.readOnly {
			t.Errorf("kind %s: a kind that changes something needs a repeat key, and one that changes nothing has none", k)
		}
		if tr.readOnly && (tr.settles || tr.conflictMeansExists || tr.journalsBalance) {
			t.Errorf("kind %s: a kind that changes nothing has no write to settle, find or journal", k)
		}
	}
	if len(seen) != len(registry) {
		t.Errorf("%d kinds for %d registered", len(seen), len(registry))
	}
}

// TestDocsDescribeEveryKind: docs/jobs.md's table of columns has one row per kind naming each of its
// columns, and no row for a kind that does not exist.
func TestDocsDescribeEveryKind(t *testing.T) {
	b, err := os.ReadFile("../../docs/jobs.md")
	if err != nil {
		t.Fatal(err)
	}
	_, table, ok := strings.Cut(string(b), "\n## Columns of each kind\n")
	if !ok {
		t.Fatal("docs/jobs.md has no section 'Columns of each kind'")
	}
	table, _, _ = strings.Cut(table, "\n## ")
	rows := map[Kind]string{}
	name := regexp.MustCompile("`([a-z-]+)`")
	for _, line := range strings.Split(table, "\n") {
		cells := strings.Split(line, "|")
		if len(cells) < 5 || !strings.HasPrefix(line, "| `") {
			continue
		}
		for _, m := range name.FindAllStringSubmatch(cells[1], -1) {
			if _, err := kindOf(Kind(m[1])); err != nil {
				t.Errorf("docs/jobs.md describes %s: %v", m[1], err)
			}
			rows[Kind(m[1])] = cells[3]
		}
	}
	for _, k := range Kinds() {
		cols, ok := rows[k]
		if !ok {
			t.Errorf("docs/jobs.md's table of columns has no row for %s", k)
			continue
		}
		s, _ := kindOf(k)
		for _, c := range s.traits().columns {
			if !regexp.MustCompile(`\b` + regexp.QuoteMeta(c.name) + `\b`).MatchString(cols) {
				t.Errorf("docs/jobs.md: the row of %s does not name its column %s", k, c.name)
			}
		}
	}
}

// TestDocsTablesNameEveryKind: each of docs/jobs.md's tables by kind (what a repeat is, which of the
// service's records show a change, how an unknown outcome is settled) has a row for every kind, and names no
// kind that does not exist: a new kind is not done until each says how it behaves.
func TestDocsTablesNameEveryKind(t *testing.T) {
	b, err := os.ReadFile("../../docs/jobs.md")
	if err != nil {
		t.Fatal(err)
	}
	name := regexp.MustCompile(`[a-z]+(?:-[a-z]+)+`)
	for _, head := range []string{"| kind | the same change is |", "| kind | the service's record that shows the change |",
		"| kind | how an unknown outcome is settled |"} {
		_, table, ok := strings.Cut(string(b), head+"\n")
		if !ok {
			t.Errorf("docs/jobs.md has no table %q", head)
			continue
		}
		named := map[Kind]bool{}
		for _, line := range strings.Split(table, "\n") {
			line = strings.TrimSpace(line)
			if !strings.HasPrefix(line, "|") {
				break
			}
			cells := strings.Split(line, "|")
			for _, m := range name.FindAllString(cells[1], -1) {
				if _, err := kindOf(Kind(m)); err != nil {
					t.Errorf("docs/jobs.md table %q: %v", head, err)
				}
				named[Kind(m)] = true
			}
		}
		for _, k := range Kinds() {
			if !named[k] {
				t.Errorf("docs/jobs.md table %q has no row for %s", head, k)
			}
		}
	}
}

// TestEveryKindDecidesItsTraces: each kind says which synced records show its change (a query of the
// warehouse, a key and a match) or why none can, never neither nor half of it.
func TestEveryKindDecidesItsTraces(t *testing.T) {
	for _, s := range registry {
		r := s.traces()
		switch {
		case r.query == "" && strings.TrimSpace(r.none) == "":
			t.Errorf("%s: traces names neither a query nor why no synced record shows its change", s.name())
		case r.query != "" && r.none != "":
			t.Errorf("%s: traces names a query and says none can show its change", s.name())
		case r.query != "" && (r.key == nil || r.match == nil):
			t.Errorf("%s: traces query %s without a key or a match", s.name(), r.query)
		case r.query != "" && warehouseSQL.Get(r.query) == "":
			t.Errorf("%s: traces query %s is no section of queries/warehouse.sql", s.name(), r.query)
		case s.traits().readOnly && r.query != "":
			t.Errorf("%s changes nothing, yet traces would hold it", s.name())
		}
	}
}
