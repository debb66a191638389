package queries

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"embed"
	"encoding/hex"
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"slices"
	"strings"

	"github.com/billsync/billsync/internal/config"
	"github.com/billsync/billsync/internal/duckfile"
	"github.com/billsync/billsync/internal/entity"
	"github.com/billsync/billsync/internal/jobs/journalfile"
)

// The report macros and views: the building blocks the query files call and analysts query
// (docs/warehouse.md), one file per object in macros/, named like it. They are the reports', not
// the warehouse's: the sync run installs them (Install) in the file it publishes, so each query
// file runs alone in any DuckDB client against a published warehouse, and a reader (the report
// command) brings this version's on a file another billsync published (UseCurrent).
//
// A parameter named like a column (account) stands for the parameter wherever a macro's body
// names it unqualified, so every column in the table macros' bodies is written with its table's
// alias.
//
//go:embed macros/*.sql
var macroFS embed.FS

// zoneMacro is the reports' default time zone, BILLSYNC_TZ's default: the one place it is
// written for SQL. A query file falls back to it when the session has no tz variable, and a
// macro's tz parameter defaults to it (DuckDB evaluates a parameter's default when it creates the
// macro). The report command always sets tz, from BILLSYNC_TZ.
const zoneMacro = "report_zone"

// versionMacro returns Version in a warehouse the macros were installed in.
const versionMacro = "billsync_report_macros_version"

// Macro is one report macro or view: its name (its file's) and the statement creating it.
type Macro struct {
	Name string
	SQL  string
}

var (
	createRe  = regexp.MustCompile(`(?m)^CREATE OR REPLACE (MACRO|VIEW) (\w+)`)
	wordRe    = regexp.MustCompile(`\w+`)
	commentRe = regexp.MustCompile(`(?m)--.*$`)
)

// Macros are the report macros and views in an order DuckDB can create them in: each after
// the ones its statement calls (DuckDB binds a macro's body when it creates it), report_zone
// first.
var Macros = append(mustMacros(macroFS), entityViews()...)

// entityViews are the views that list the entity tables, generated from internal/entity's
// declarations rather than written by hand: a declared table is counted and named in the
// data-quality reports without a line in their SQL.
func entityViews() []Macro {
	decls := entity.All()
	return []Macro{
		{Name: entity.HeldRowsView, SQL: entity.RowsViewSQL(decls)},
		{Name: entity.DeletedLabelsView, SQL: entity.DeletedLabelsSQL(decls)},
	}
}

// Version identifies Macros: a warehouse whose billsync_report_macros_version() returns it has
// exactly these definitions.
var Version = func() string {
	h := sha256.New()
	for _, m := range Macros {
		h.Write([]byte(m.SQL + "\n;\n"))
	}
	return hex.EncodeToString(h.Sum(nil)[:8])
}()

func mustMacros(fsys fs.FS) []Macro {
	ms, err := loadMacros(fsys)
	if err != nil {
		panic(err)
	}
	return ms
}

// loadMacros reads macros/*.sql: each file creates exactly the macro or view it is named after,
// with one CREATE OR REPLACE statement. Files are ordered so that a macro comes after every
// other the statement names (comments aside); a cycle fails.
func loadMacros(fsys fs.FS) ([]Macro, error) {
	files, err := fs.Glob(fsys, "macros/*.sql")
	if err != nil {
		return nil, err
	}
	zone := Macro{Name: zoneMacro, SQL: "CREATE OR REPLACE MACRO " + zoneMacro + "() AS " + duckfile.QuoteLiteral(config.DefaultTZ)}
	byName := map[string]Macro{zoneMacro: zone}
	var names []string
	for _, f := range files {
		b, err := fs.ReadFile(fsys, f)
		if err != nil {
			return nil, err
		}
		name := strings.TrimSuffix(path.Base(f), ".sql")
		text := strings.TrimSpace(string(b))
		creates := createRe.FindAllStringSubmatch(text, -1)
		if len(creates) != 1 || creates[0][2] != name {
			return nil, fmt.Errorf("queries/%s: want one CREATE OR REPLACE MACRO or VIEW %s, found %d statements creating %v", f, name, len(creates), creates)
		}
		if _, dup := byName[name]; dup {
			return nil, fmt.Errorf("queries/%s: %s is defined twice", f, name)
		}
		byName[name] = Macro{Name: name, SQL: strings.TrimSuffix(text, ";")}
		names = append(names, name)
	}
	deps := map[string][]string{}
	for _, n := range names {
		body := commentRe.ReplaceAllString(byName[n].SQL, "")
		for _, w := range wordRe.FindAllString(body, -1) {
			if _, ok := byName[w]; ok && w != n && !slices.Contains(deps[n], w) {
				deps[n] = append(deps[n], w)
			}
		}
	}
	out := []Macro{zone}
	state := map[string]int{zoneMacro: 2} // 1 being placed, 2 placed
	var place func(n string, via []string) error
	place = func(n string, via []string) error {
		switch state[n] {
		case 1:
			return fmt.Errorf("queries/macros: %s calls itself through %s", n, strings.Join(via, " -> "))
		case 2:
			return nil
		}
		state[n] = 1
		for _, d := range deps[n] {
			if err := place(d, append(via, d)); err != nil {
				return err
			}
		}
		state[n] = 2
		out = append(out, byName[n])
		return nil
	}
	for _, n := range names {
		if err := place(n, []string{n}); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// Install creates or replaces the report macros and views in the warehouse db, with the version
// stamp UseCurrent checks. The sync run calls it on the build it publishes. db needs the
// warehouse's tables; the journal's tables the credit macros read are stood in for while they
// are created.
func Install(ctx context.Context, db *sql.DB) error {
	conn, err := db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	// DuckDB binds a macro's body when it is created, so credit_balances needs the journal's
	// credit_balance_reports and credit_report_names to exist; at run time the reader attaches
	// the journal and names them so (docs/reports.md). The empty stand-ins live only in this
	// connection's temp schema.
	if _, err := tx.ExecContext(ctx, journalfile.StandInSQL()); err != nil {
		return fmt.Errorf("report macros: %w", err)
	}
	for _, m := range Macros {
		if _, err := tx.ExecContext(ctx, m.SQL); err != nil {
			return fmt.Errorf("report macro %s (queries/macros): %w", m.Name, err)
		}
	}
	if _, err := tx.ExecContext(ctx, "CREATE OR REPLACE MACRO "+versionMacro+"() AS "+duckfile.QuoteLiteral(Version)); err != nil {
		return fmt.Errorf("report macros version: %w", err)
	}
	if _, err := tx.ExecContext(ctx, "DROP TABLE temp.credit_balance_reports; DROP TABLE temp.credit_report_names"); err != nil {
		return err
	}
	return tx.Commit()
}

// UseCurrent makes the report macros and views, as this billsync defines them, the ones queries
// on conn see. A warehouse this billsync published has them; on one another version published
// (read-only: a reader cannot change it) they are created as temporary objects of conn, which
// shadow the file's own. conn must see credit_balance_reports and credit_report_names
// (journalfile.Views).
func UseCurrent(ctx context.Context, conn *sql.Conn) error {
	var v string
	err := conn.QueryRowContext(ctx, "SELECT "+versionMacro+"()").Scan(&v)
	if err == nil && v == Version {
		return nil
	}
	for _, m := range Macros {
		if _, err := conn.ExecContext(ctx, temporary(m.SQL)); err != nil {
			return fmt.Errorf("the warehouse's report macros are of another billsync version; defining this version's %s failed: %w", m.Name, err)
		}
	}
	return nil
}

// temporary is a CREATE OR REPLACE MACRO or VIEW statement creating a TEMP object.
func temporary(stmt string) string {
	return createRe.ReplaceAllString(stmt, "CREATE OR REPLACE TEMP $1 $2")
}
