package warehouse

import (
	"fmt"
	"io/fs"
	"maps"
	"path"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/billsync/billsync/internal/entity"
	"github.com/billsync/billsync/internal/sqlfile"
)

type entityDef struct {
	decl    *entity.Decl
	table   string
	deletes bool     // a full list marks rows it did not contain as deleted upstream
	detail  bool     // fills columns of rows another entity listed; never inserts
	derived []string // child tables built after the upsert (child.go), in declaration order
	sql     map[string]string
	optOut  map[string]bool // steps the entity's file declares it does not need
}

// entitySections are the sections an entity's own file may define: its projection, its change
// history, and overrides of common.sql's steps.
var entitySections = []string{"project", "changes", "classify", "counts", "lifecycle", "upsert"}

// generatedSections are the sections a declaration implies when its file does not define them.
var generatedSections = map[string]func(*entity.Decl) (string, error){"project": projectSQL, "changes": changesSQL}

// commonSections are the steps common.sql provides to every entity.
var commonSections = []string{"staged", "first_path", "stored_before", "first_overlap", "parse_all", "keys", "dedupe", "dedupe_keyed", "classify",
	"classify_first", "counts", "counts_first", "lifecycle", "insert_direct", "direct_rowid", "direct_batch_ids", "direct_ids", "insert_first", "upsert", "deleted", "seen_in_run"}

// The merge SQL is a contract between the declarations, these files and the loader: every step
// the loader runs for an entity must resolve to a statement (or to a declared opt-out), a
// section name the loader does not know is an error, and an entity's file holds exactly the
// sections its declaration names, so a misspelled or dropped section fails when the package
// loads instead of silently skipping work.
var entityDefs = mustLoadEntityDefs()

func mustLoadEntityDefs() map[entity.Name]*entityDef {
	defs, err := loadEntityDefs(sqlFS)
	if err != nil {
		panic(err)
	}
	return defs
}

// mergeShared are the files of merge/ that are not an entity's.
var mergeShared = []string{"common.sql"}

// newEntityDefs is the registry: one entity per declaration (internal/entity); merge/<entity>.sql
// exists for the entities that declare hand-written SQL, and for no other name.
func newEntityDefs(fsys fs.FS, decls []*entity.Decl) (map[entity.Name]*entityDef, error) {
	if err := entity.Check(decls); err != nil {
		return nil, err
	}
	defs := map[entity.Name]*entityDef{}
	for _, d := range decls {
		def := &entityDef{decl: d, table: d.TableName(), deletes: d.Rule == entity.FullRefresh, detail: d.Rule == entity.FillDetail}
		for _, c := range d.Derived {
			def.derived = append(def.derived, c.Table)
		}
		defs[d.Name] = def
	}
	files, err := fs.Glob(fsys, "merge/*.sql")
	if err != nil {
		return nil, err
	}
	for _, f := range files {
		name := path.Base(f)
		if slices.Contains(mergeShared, name) {
			continue
		}
		e := entity.Name(strings.TrimSuffix(name, ".sql"))
		if d := defs[e]; d == nil || len(d.decl.SQL) == 0 {
			return nil, fmt.Errorf("%s: no entity declares hand-written SQL of that name (internal/entity)", f)
		}
	}
	return defs, nil
}

// ListEntities are the entities read as whole lists (a list read whole marks deletions), sorted:
// fetch has one list stream per entity, checked by its tests.
func ListEntities() []entity.Name {
	var out []entity.Name
	for e, d := range entityDefs {
		if d.deletes && !d.detail {
			out = append(out, e)
		}
	}
	slices.Sort(out)
	return out
}

// DataTables are the tables the entities fill, each followed by its derived tables, sorted:
// what an analyst reads (record_changes and the sync bookkeeping aside).
func DataTables() []string {
	derived := map[string][]string{}
	var tables []string
	for _, d := range entityDefs {
		if !slices.Contains(tables, d.table) {
			tables = append(tables, d.table)
		}
		for _, c := range d.derived {
			if !slices.Contains(derived[d.table], c) {
				derived[d.table] = append(derived[d.table], c)
			}
		}
	}
	slices.Sort(tables)
	var out []string
	for _, t := range tables {
		slices.Sort(derived[t])
		out = append(append(out, t), derived[t]...)
	}
	return out
}

// direct says whether d's first loads may take the one-statement path (merge/common.sql,
// insert_direct): a list whose merge fills no child tables, since those are built from the
// materialized projection.
func (d *entityDef) direct() bool { return !d.detail && len(d.derived) == 0 }

// Each entity's projection creates this temp table; the direct path's insert_direct reads the
// same query as a subquery in place of __PROJECTION__, so the projection is written once (and
// bound once a merge: a view of it would cost a second binding at every merge).
const projectTable = "CREATE OR REPLACE TEMP TABLE projected AS"

// directProjection is the query of a project section, for insert_direct.
func directProjection(project string) (string, error) {
	if strings.Count(project, projectTable) != 1 {
		return "", fmt.Errorf("section \"project\" must create the table with %q, once", projectTable)
	}
	q := strings.TrimSpace(strings.Replace(stripComments(project), projectTable, "", 1))
	q = strings.TrimSuffix(q, ";")
	if strings.Contains(q, ";") {
		return "", fmt.Errorf("section \"project\" must be one statement")
	}
	return q, nil
}

// steps lists every statement the loader may run for d, in any of its paths.
func (d *entityDef) steps() []string {
	var s []string
	if d.detail {
		s = []string{"staged", "parse_all", "project", "dedupe", "classify", "counts", "lifecycle", "changes", "upsert"}
	} else {
		s = []string{"staged", "first_path", "stored_before", "first_overlap", "parse_all", "keys", "project", "dedupe", "dedupe_keyed",
			"classify", "classify_first", "counts", "counts_first", "lifecycle", "changes", "upsert", "insert_first"}
		if d.direct() {
			s = append(s, "insert_direct", "direct_rowid", "direct_batch_ids", "direct_ids")
		}
		if d.deletes {
			s = append(s, "deleted", "seen_in_run")
		}
	}
	for _, name := range d.derived {
		s = append(s, "derived_"+name+"_incoming", "derived_"+name, "derived_"+name+"_first")
	}
	return s
}

var (
	placeholderRe = regexp.MustCompile(`__[A-Z_]+__`)
	optOutRe      = regexp.MustCompile(`(?m)^\s*-- opt-out: *\S`)
)

func loadEntityDefs(fsys fs.FS) (map[entity.Name]*entityDef, error) {
	return loadDeclared(fsys, entity.All())
}

func loadDeclared(fsys fs.FS, decls []*entity.Decl) (map[entity.Name]*entityDef, error) {
	defs, err := newEntityDefs(fsys, decls)
	if err != nil {
		return nil, err
	}
	common, err := sqlfile.Sections(fsys, "merge/common.sql")
	if err != nil {
		return nil, err
	}
	if err := knownOnly("merge/common.sql", common, commonSections); err != nil {
		return nil, err
	}
	var problems []string
	for e, d := range defs {
		file := "merge/" + string(e) + ".sql"
		own := map[string]string{}
		if len(d.decl.SQL) > 0 {
			if own, err = sqlfile.Sections(fsys, file); err != nil {
				return nil, fmt.Errorf("%s: its declaration names hand-written SQL (%s): %w", e, strings.Join(d.decl.SQL, ", "), err)
			}
		}
		if err := knownOnly(file, own, entitySections); err != nil {
			return nil, err
		}
		for name := range own {
			if !slices.Contains(d.decl.SQL, name) {
				problems = append(problems, fmt.Sprintf("%s: section %q of %s is not in the declaration's SQL (internal/entity)", e, name, file))
			}
		}
		for _, name := range d.decl.SQL {
			if _, ok := own[name]; !ok {
				problems = append(problems, fmt.Sprintf("%s: step %q has no section (in %s, which its declaration says holds it)", e, name, file))
			}
		}
		for name, gen := range generatedSections {
			if _, ok := own[name]; ok {
				continue
			}
			text, err := gen(d.decl)
			if err != nil {
				problems = append(problems, fmt.Sprintf("%s: generated section %q: %v", e, name, err))
				continue
			}
			own[name] = text
		}
		d.sql, d.optOut = map[string]string{}, map[string]bool{}
		// constant only: the table name comes from the map above
		r := strings.NewReplacer("__TABLE__", d.table)
		for name, text := range common {
			d.sql[name] = r.Replace(text)
		}
		for name, text := range own {
			d.sql[name] = text
		}
		if d.direct() {
			if q, err := directProjection(d.sql["project"]); err != nil {
				problems = append(problems, fmt.Sprintf("%s: %v", e, err))
			} else {
				d.sql["insert_direct"] = strings.Replace(d.sql["insert_direct"], "__PROJECTION__", q, 1)
			}
		} else {
			delete(d.sql, "insert_direct") // holds __PROJECTION__: the entity takes no direct path
		}
		if slices.Contains(d.decl.SQL, "project") {
			for _, m := range handProjectionGivesChildren(d.decl, d.sql["project"]) {
				problems = append(problems, fmt.Sprintf("%s: %s (%s)", e, m, file))
			}
		}
		for _, c := range d.decl.Derived {
			maps.Copy(d.sql, childSections(d.decl, c))
		}
		for _, step := range d.steps() {
			text, ok := d.sql[step]
			switch {
			case !ok:
				problems = append(problems, fmt.Sprintf("%s: step %q has no section (in %s or merge/common.sql)", e, step, file))
			case strings.TrimSpace(stripComments(text)) == "":
				if !optOutRe.MatchString(text) {
					problems = append(problems, fmt.Sprintf("%s: section %q is empty; write `-- opt-out: <why>` if the entity needs no such step", e, step))
				}
				d.optOut[step] = true
			case placeholderRe.MatchString(text):
				problems = append(problems, fmt.Sprintf("%s: section %q keeps placeholder %s", e, step, placeholderRe.FindString(text)))
			}
		}
	}
	if len(problems) > 0 {
		sort.Strings(problems)
		return nil, fmt.Errorf("merge SQL contract:\n  %s", strings.Join(problems, "\n  "))
	}
	return defs, nil
}

// knownOnly fails on a section name outside known: a typo would otherwise define a statement
// nothing runs.
func knownOnly(file string, sections map[string]string, known []string) error {
	var unknown []string
	for name := range sections {
		if !slices.Contains(known, name) {
			unknown = append(unknown, name)
		}
	}
	if len(unknown) == 0 {
		return nil
	}
	sort.Strings(unknown)
	k := slices.Clone(known)
	sort.Strings(k)
	return fmt.Errorf("%s: unknown section(s) %s (known: %s)", file, strings.Join(unknown, ", "), strings.Join(k, ", "))
}
