package jobs

import (
	"embed"
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

//go:embed migrations/*.sql queries/*.sql
var sqlFS embed.FS

// section headers split one .sql file into named statements ("-- name: insert_plan").
var sectionRe = regexp.MustCompile(`(?m)^-- name: *([a-z_]+) *$`)

var (
	journalSQL   = mustSections("queries/journal.sql")
	warehouseSQL = mustSections("queries/warehouse.sql")
)

func mustSections(file string) map[string]string {
	b, err := sqlFS.ReadFile(file)
	if err != nil {
		panic(err)
	}
	text := string(b)
	out := map[string]string{}
	locs := sectionRe.FindAllStringSubmatchIndex(text, -1)
	for i, loc := range locs {
		end := len(text)
		if i+1 < len(locs) {
			end = locs[i+1][0]
		}
		name := text[loc[2]:loc[3]]
		if _, dup := out[name]; dup {
			panic(fmt.Sprintf("%s: section %q defined twice", file, name))
		}
		out[name] = strings.TrimSpace(text[loc[1]:end])
	}
	return out
}

type migration struct {
	version int
	name    string
	sql     string
}

var migrationRe = regexp.MustCompile(`^(\d{4})_([a-z0-9_]+)\.sql$`)

func migrations() ([]migration, error) {
	entries, err := fs.ReadDir(sqlFS, "migrations")
	if err != nil {
		return nil, err
	}
	var out []migration
	for _, e := range entries {
		m := migrationRe.FindStringSubmatch(e.Name())
		if m == nil {
			return nil, fmt.Errorf("migration file %s: name is not NNNN_name.sql", e.Name())
		}
		v, _ := strconv.Atoi(m[1])
		b, err := sqlFS.ReadFile(path.Join("migrations", e.Name()))
		if err != nil {
			return nil, err
		}
		out = append(out, migration{version: v, name: m[2], sql: string(b)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].version < out[j].version })
	return out, nil
}
