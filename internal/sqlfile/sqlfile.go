// Package sqlfile reads the embedded .sql files of the packages that own a DuckDB file: named
// statements ("-- name: insert_run" sections) and numbered migrations (NNNN_name.sql), which it
// applies once each, recording them in schema_migrations.
package sqlfile

import (
	"context"
	"database/sql"
	"embed"
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

var sectionRe = regexp.MustCompile(`(?m)^-- name: *([a-z_]+) *$`)

// Sections returns the named statements of file: each "-- name: x" line starts statement x,
// which runs to the next such line.
func Sections(fsys fs.FS, file string) (map[string]string, error) {
	b, err := fs.ReadFile(fsys, file)
	if err != nil {
		return nil, err
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
			return nil, fmt.Errorf("%s: section %q defined twice", file, name)
		}
		out[name] = strings.TrimSpace(text[loc[1]:end])
	}
	return out, nil
}

// MustSections is Sections for a package's own embedded files, whose shape its tests pin.
func MustSections(fsys fs.FS, file string) map[string]string {
	s, err := Sections(fsys, file)
	if err != nil {
		panic(err)
	}
	return s
}

// Statements are the named statements of one file, checked against the names the Go code that
// runs them declares: a section nobody runs or a name with no section fails the load, so a typo
// on either side shows up as an error instead of a statement silently not run.
type Statements struct {
	file string
	m    map[string]string
}

// Load reads file's sections and checks that they are exactly names.
func Load(fsys fs.FS, file string, names ...string) (Statements, error) {
	m, err := Sections(fsys, file)
	if err != nil {
		return Statements{}, err
	}
	var missing, extra []string
	want := map[string]bool{}
	for _, n := range names {
		want[n] = true
		if _, ok := m[n]; !ok {
			missing = append(missing, n)
		}
	}
	for n := range m {
		if !want[n] {
			extra = append(extra, n)
		}
	}
	sort.Strings(extra)
	var problems []string
	if len(missing) > 0 {
		problems = append(problems, "no section for "+strings.Join(missing, ", "))
	}
	if len(extra) > 0 {
		problems = append(problems, "section(s) "+strings.Join(extra, ", ")+" declared by no caller")
	}
	if len(problems) > 0 {
		return Statements{}, fmt.Errorf("%s: %s", file, strings.Join(problems, "; "))
	}
	return Statements{file: file, m: m}, nil
}

// MustLoad is Load for a package's own embedded files: a mismatch fails every test of the package.
func MustLoad(fsys fs.FS, file string, names ...string) Statements {
	s, err := Load(fsys, file, names...)
	if err != nil {
		panic(err)
	}
	return s
}

// Get returns the statement name, which Load checked exists; an undeclared name is a bug.
func (s Statements) Get(name string) string {
	text, ok := s.m[name]
	if !ok {
		panic(fmt.Sprintf("%s: statement %q was not declared when the file was loaded", s.file, name))
	}
	return text
}

// Migration is one numbered schema change.
type Migration struct {
	Version int
	Name    string
	SQL     string
}

var migrationRe = regexp.MustCompile(`^(\d{4})_([a-z0-9_]+)\.sql$`)

// Migrations lists dir/NNNN_name.sql in version order.
func Migrations(fsys fs.FS, dir string) ([]Migration, error) {
	entries, err := fs.ReadDir(fsys, dir)
	if err != nil {
		return nil, err
	}
	var out []Migration
	for _, e := range entries {
		m := migrationRe.FindStringSubmatch(e.Name())
		if m == nil {
			return nil, fmt.Errorf("migration file %s: name is not NNNN_name.sql", e.Name())
		}
		v, _ := strconv.Atoi(m[1])
		b, err := fs.ReadFile(fsys, path.Join(dir, e.Name()))
		if err != nil {
			return nil, err
		}
		out = append(out, Migration{Version: v, Name: m[2], SQL: string(b)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Version < out[j].Version })
	for i := 1; i < len(out); i++ {
		if out[i].Version == out[i-1].Version {
			return nil, fmt.Errorf("migration version %04d used twice", out[i].Version)
		}
	}
	return out, nil
}

//go:embed schema_migrations.sql
var own embed.FS

var stmts = MustLoad(own, "schema_migrations.sql", "create", "applied", "record")

// Migrate applies the migrations of dir not yet recorded in db, each in its own transaction.
func Migrate(ctx context.Context, db *sql.DB, fsys fs.FS, dir string) error {
	if _, err := db.ExecContext(ctx, stmts.Get("create")); err != nil {
		return fmt.Errorf("create schema_migrations: %w", err)
	}
	applied := map[int]bool{}
	rows, err := db.QueryContext(ctx, stmts.Get("applied"))
	if err != nil {
		return fmt.Errorf("read schema_migrations: %w", err)
	}
	for rows.Next() {
		var v int
		if err := rows.Scan(&v); err != nil {
			rows.Close()
			return err
		}
		applied[v] = true
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	ms, err := Migrations(fsys, dir)
	if err != nil {
		return err
	}
	for _, m := range ms {
		if applied[m.Version] {
			continue
		}
		if err := apply(ctx, db, m); err != nil {
			return fmt.Errorf("migration %04d_%s: %w", m.Version, m.Name, err)
		}
	}
	return nil
}

func apply(ctx context.Context, db *sql.DB, m Migration) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, m.SQL); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, stmts.Get("record"), m.Version, m.Name); err != nil {
		return err
	}
	return tx.Commit()
}
