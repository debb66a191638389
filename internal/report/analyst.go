package report

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	duckdb "github.com/duckdb/duckdb-go/v2"

	"github.com/billsync/billsync/internal/duckfile"
)

// An analyst's SQL (report -sql) runs with least privilege, in two layers (docs/warehouse.md,
// "What an analyst's SQL may do"):
//
//  1. DuckDB itself (duckfile.Confine): the warehouse and the journal are attached read-only, file
//     functions reach only the folders analystFiles allows, no extension is installed or
//     loaded, the configuration is locked.
//  2. Each statement, before it runs (allowText, then allowKind once DuckDB prepared it): its
//     kind, as DuckDB prepares it, must be one an analyst needs; ATTACH and DETACH (which would re-open the journal writable inside
//     those folders) never are. A COPY writes only into the output folder, which DuckDB's single
//     list of folders cannot say (it allows reading and writing alike), and functions with a side
//     effect on the instance (logging to files, checkpoints, SQL run from text) are refused.

// analystFiles are the folders an analyst's SQL reaches: read holds the warehouse's folder, the
// output folder and BILLSYNC_SQL_FILES; write the output folder and BILLSYNC_SQL_FILES; owned the
// folders of billsync's own files (the warehouse, its journals, job plans), never written.
type analystFiles struct {
	read, write, owned []string
}

func newAnalystFiles(s *settings) (*analystFiles, error) {
	extra := filepath.SplitList(s.SQLFiles)
	f := &analystFiles{}
	for _, d := range append([]string{filepath.Dir(s.DB), s.ReportsOut}, extra...) {
		if d = strings.TrimSpace(d); d != "" {
			f.read = append(f.read, d)
		}
	}
	for _, d := range append([]string{s.ReportsOut}, extra...) {
		if d = strings.TrimSpace(d); d != "" {
			f.write = append(f.write, d)
		}
	}
	f.owned = []string{filepath.Dir(s.DB), filepath.Join(filepath.Dir(s.DB), "jobs")}
	if s.Journal != "" {
		// the journal's folder and the job plans and results written beside it (syncer job)
		f.owned = append(f.owned, filepath.Dir(s.Journal), filepath.Join(filepath.Dir(s.Journal), "jobs"))
	}
	return f, f.checkLinks()
}

// maxWalk bounds the entries checkLinks looks at: past it, it cannot prove the folders hold no
// link leading out in the time a query may take, and says so.
const maxWalk = 50_000

// checkLinks refuses a symbolic link in a readable folder that leads outside them: DuckDB
// compares the text of a path with its allowed folders, so out/etc -> /etc would open /etc
// through out/. A link that leads elsewhere inside them is fine.
func (f *analystFiles) checkLinks() error {
	seen := 0
	var roots []string
	for _, d := range f.read {
		if r, err := realPath(d); err == nil {
			roots = append(roots, r)
		}
	}
	for _, d := range f.read {
		err := filepath.WalkDir(d, func(p string, e fs.DirEntry, err error) error {
			if err != nil {
				if p == d && errors.Is(err, fs.ErrNotExist) {
					return nil
				}
				return err
			}
			if seen++; seen > maxWalk {
				return fmt.Errorf("the folders analyst SQL may read (%s) hold more than %d files, too many to check that no symbolic link in them leads out: keep the warehouse and the reports in folders of their own",
					strings.Join(f.read, ", "), maxWalk)
			}
			if e.Type()&fs.ModeSymlink == 0 || p == d {
				return nil
			}
			target, err := filepath.EvalSymlinks(p)
			if errors.Is(err, fs.ErrNotExist) {
				target, _ = os.Readlink(p)
			} else if err != nil {
				return err
			}
			if !slices.ContainsFunc(roots, func(r string) bool { return within(target, r) }) {
				return fmt.Errorf("%s is a symbolic link to %s, outside the folders analyst SQL may read (%s): remove the link, or add its target to BILLSYNC_SQL_FILES",
					p, target, strings.Join(f.read, ", "))
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// confine locks the instance down to f's readable folders (layer 1).
func (f *analystFiles) confine(ctx context.Context, db *sql.DB) error {
	return duckfile.Confine(ctx, db, duckfile.Confinement{Dirs: f.read})
}

// hint says, after a refused file access, which folders analyst SQL reaches.
func (f *analystFiles) hint() string {
	return fmt.Sprintf("analyst SQL reads files only in %s and writes them (COPY … TO) only in %s; BILLSYNC_SQL_FILES adds folders to both",
		strings.Join(f.read, ", "), strings.Join(f.write, ", "))
}

// analystKinds are the statements an analyst's SQL may run, by DuckDB's kind of the prepared
// statement. Everything else is refused by name: ATTACH and DETACH (the warehouse and the journal
// are attached already, read-only), CREATE, INSERT and the other writes, PRAGMA and CALL (SELECT
// the function instead), INSTALL and LOAD, EXPORT DATABASE, PREPARE and EXECUTE (a prepared
// statement would run unseen).
var analystKinds = map[duckdb.StmtType]string{
	duckdb.STATEMENT_TYPE_SELECT:       "SELECT",
	duckdb.STATEMENT_TYPE_SET:          "SET",
	duckdb.STATEMENT_TYPE_VARIABLE_SET: "SET VARIABLE",
	duckdb.STATEMENT_TYPE_TRANSACTION:  "BEGIN/COMMIT",
	duckdb.STATEMENT_TYPE_EXPLAIN:      "EXPLAIN",
	duckdb.STATEMENT_TYPE_COPY:         "COPY … TO",
}

var kindNames = map[duckdb.StmtType]string{
	duckdb.STATEMENT_TYPE_INSERT: "INSERT", duckdb.STATEMENT_TYPE_UPDATE: "UPDATE", duckdb.STATEMENT_TYPE_DELETE: "DELETE",
	duckdb.STATEMENT_TYPE_PREPARE: "PREPARE", duckdb.STATEMENT_TYPE_CREATE: "CREATE", duckdb.STATEMENT_TYPE_EXECUTE: "EXECUTE",
	duckdb.STATEMENT_TYPE_ALTER: "ALTER", duckdb.STATEMENT_TYPE_ANALYZE: "ANALYZE", duckdb.STATEMENT_TYPE_CREATE_FUNC: "CREATE FUNCTION",
	duckdb.STATEMENT_TYPE_DROP: "DROP", duckdb.STATEMENT_TYPE_EXPORT: "EXPORT DATABASE", duckdb.STATEMENT_TYPE_PRAGMA: "PRAGMA",
	duckdb.STATEMENT_TYPE_VACUUM: "VACUUM", duckdb.STATEMENT_TYPE_CALL: "CALL (or CHECKPOINT)", duckdb.STATEMENT_TYPE_LOAD: "INSTALL or LOAD",
	duckdb.STATEMENT_TYPE_EXTENSION: "an extension's statement", duckdb.STATEMENT_TYPE_ATTACH: "ATTACH", duckdb.STATEMENT_TYPE_DETACH: "DETACH",
	duckdb.STATEMENT_TYPE_MULTI: "a multi-part statement",
}

// sideEffects are functions whose call changes the instance or the files around it, or runs SQL
// from text this check cannot see: refused wherever they are called.
var sideEffects = []string{
	"enable_logging", "disable_logging", "truncate_duckdb_logs", "write_log",
	"checkpoint", "force_checkpoint", "import_database", "copy_database",
	"query", "json_execute_serialized_sql",
	"enable_profiling", "enable_profile", "disable_profiling", "disable_profile",
	"enable_checkpoint_on_shutdown", "disable_checkpoint_on_shutdown",
	"enable_object_cache", "disable_object_cache", "enable_optimizer", "disable_optimizer",
	"enable_verification", "disable_verification", "enable_progress_bar", "disable_progress_bar",
	"enable_print_progress_bar", "disable_print_progress_bar", "enable_peg_parser", "disable_peg_parser",
	"verify_external", "verify_fetch_row", "verify_parallelism", "verify_serializer",
	"disable_verify_external", "disable_verify_fetch_row", "disable_verify_parallelism", "disable_verify_serializer",
	"add_parquet_key",
}

// statementKind prepares one statement on conn (nothing runs) and returns its kind. DuckDB's
// Prepare without a context refuses text holding more than one statement, so a statement the
// splitter took for one cannot carry a second past this check.
func statementKind(conn *sql.Conn, stmt string) (duckdb.StmtType, error) {
	var typ duckdb.StmtType
	err := conn.Raw(func(dc any) error {
		c, ok := dc.(*duckdb.Conn)
		if !ok {
			return fmt.Errorf("not a DuckDB connection: %T", dc)
		}
		st, err := c.Prepare(stmt)
		if err != nil {
			return err
		}
		defer st.Close()
		ds, ok := st.(*duckdb.Stmt)
		if !ok {
			return fmt.Errorf("not a DuckDB statement: %T", st)
		}
		typ, err = ds.StatementType()
		return err
	})
	return typ, err
}

// readPragmas are the PRAGMAs an analyst may run: each only reads (DuckDB turns them into
// queries). Any other PRAGMA sets something or, like import_database, runs statements from files
// while it is prepared, so it is refused before DuckDB sees it.
var readPragmas = []string{"table_info", "show", "show_tables", "show_tables_expanded", "show_databases",
	"database_size", "storage_info", "metadata_info", "version", "platform", "user_agent", "functions",
	"collations", "database_list"}

// allowText says whether one statement of an analyst's SQL may be prepared, from its tokens
// alone (layer 2, before DuckDB sees it); n is its place in the text, for the message.
func (f *analystFiles) allowText(toks []token, n int) error {
	where := fmt.Sprintf("statement %d", n)
	if strings.EqualFold(toks[0].text, "PRAGMA") {
		if len(toks) < 2 || !slices.Contains(readPragmas, strings.ToLower(toks[1].text)) {
			return fmt.Errorf("%s: this PRAGMA is not allowed in analyst SQL; the ones that only read are: %s", where, strings.Join(readPragmas, ", "))
		}
	}
	for i, t := range toks {
		if t.kind == tokWord && i+1 < len(toks) && toks[i+1].text == "(" && slices.Contains(sideEffects, strings.ToLower(t.text)) {
			return fmt.Errorf("%s: %s() is not allowed in analyst SQL: it changes the database or runs SQL from text", where, strings.ToLower(t.text))
		}
	}
	if strings.EqualFold(toks[0].text, "COPY") {
		// before DuckDB prepares it: preparing COPY … FROM already reads the file
		return f.allowCopy(toks, where)
	}
	return nil
}

// allowKind says whether one statement, prepared as typ, may run (layer 2).
func (f *analystFiles) allowKind(toks []token, typ duckdb.StmtType, n int) error {
	where := fmt.Sprintf("statement %d", n)
	if _, ok := analystKinds[typ]; !ok {
		name := kindNames[typ]
		if name == "" {
			name = fmt.Sprintf("kind %d", typ)
		}
		return fmt.Errorf("%s: %s is not allowed in analyst SQL, which reads the warehouse and the journal (attached read-only) and writes only files in %s; it may run %s",
			where, name, strings.Join(f.write, ", "), allowedKinds())
	}
	switch typ {
	case duckdb.STATEMENT_TYPE_EXPLAIN:
		// EXPLAIN ANALYZE runs the statement it explains, unchecked
		if len(toks) > 1 && (strings.EqualFold(toks[1].text, "ANALYZE") || strings.EqualFold(toks[1].text, "ANALYSE") || toks[1].text == "(") {
			return fmt.Errorf("%s: EXPLAIN ANALYZE runs its statement; in analyst SQL only plain EXPLAIN is allowed", where)
		}
	case duckdb.STATEMENT_TYPE_COPY:
		if !strings.EqualFold(toks[0].text, "COPY") {
			return fmt.Errorf("%s: a COPY must start with COPY", where)
		}
	}
	return nil
}

func allowedKinds() string {
	return "SELECT (with DESCRIBE, SHOW, SUMMARIZE, PIVOT), SET VARIABLE, SET TimeZone, BEGIN/COMMIT, EXPLAIN and COPY … TO a file there"
}

// allowCopy admits COPY (query) TO 'file' or COPY table TO 'file', options after, with the file
// inside an output folder and outside billsync's own folders; an option naming a path (a
// FILENAME_PATTERN with a folder in it) is refused, since it could lead the files elsewhere.
func (f *analystFiles) allowCopy(toks []token, where string) error {
	bad := func(why string) error {
		return fmt.Errorf("%s: %s; analyst SQL writes with COPY (query) TO 'file' or COPY table TO 'file', the file in %s",
			where, why, strings.Join(f.write, ", "))
	}
	i := 1 // after COPY
	if i < len(toks) && toks[i].text == "(" {
		end := closing(toks, i)
		if end < 0 {
			return bad("the query's parenthesis is not closed")
		}
		i = end + 1
	} else {
		for i < len(toks) && (toks[i].kind == tokWord || toks[i].kind == tokIdent || toks[i].text == ".") && !strings.EqualFold(toks[i].text, "TO") && !strings.EqualFold(toks[i].text, "FROM") {
			i++
		}
		if i < len(toks) && toks[i].text == "(" {
			if i = closing(toks, i); i < 0 {
				return bad("the column list is not closed")
			}
			i++
		}
	}
	if i >= len(toks) || !strings.EqualFold(toks[i].text, "TO") {
		return bad("only COPY … TO a file is allowed (COPY … FROM loads a table)")
	}
	i++
	if i >= len(toks) || toks[i].kind != tokString {
		return bad("the file must be a quoted path")
	}
	target := toks[i].text
	for _, t := range toks[i+1:] {
		if t.kind == tokString && strings.ContainsAny(t.text, `/\`) {
			return bad(fmt.Sprintf("the option value %q names a folder", t.text))
		}
	}
	if strings.Contains(target, "://") || strings.HasPrefix(target, "~") || strings.HasPrefix(strings.ToLower(target), "file:") {
		return bad(fmt.Sprintf("%q is not a plain file path", target))
	}
	real, err := realPath(target)
	if err != nil {
		return bad(fmt.Sprintf("%s: %v", target, err))
	}
	w, o := deepest(real, f.write), deepest(real, f.owned)
	switch {
	case w == "":
		return bad(fmt.Sprintf("%s is outside the output folder", target))
	case o != "" && (len(w) <= len(o) || !within(w, o)):
		return bad(fmt.Sprintf("%s is in %s, a folder of billsync's own files (the warehouse, its journals, job plans), which no statement may write", target, o))
	}
	return nil
}

// deepest is the innermost of dirs (resolved) that holds p, or "".
func deepest(p string, dirs []string) string {
	best := ""
	for _, d := range dirs {
		if r, err := realPath(d); err == nil && within(p, r) && len(r) > len(best) {
			best = r
		}
	}
	return best
}

// closing is the index of the parenthesis closing the one at toks[i], or -1.
func closing(toks []token, i int) int {
	depth := 0
	for j := i; j < len(toks); j++ {
		switch toks[j].text {
		case "(":
			depth++
		case ")":
			if depth--; depth == 0 {
				return j
			}
		}
	}
	return -1
}

// realPath is p made absolute with every symbolic link of its longest existing part resolved:
// where a file written at p lands.
func realPath(p string) (string, error) {
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", err
	}
	rest := ""
	for cur := abs; ; {
		if r, err := filepath.EvalSymlinks(cur); err == nil {
			return filepath.Join(r, rest), nil
		} else if !errors.Is(err, fs.ErrNotExist) {
			return "", err
		}
		parent := filepath.Dir(cur)
		if parent == cur {
			return abs, nil
		}
		rest = filepath.Join(filepath.Base(cur), rest)
		cur = parent
	}
}

// within says whether path p is dir or inside it (both absolute and clean).
func within(p, dir string) bool {
	rel, err := filepath.Rel(dir, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}
