package duckfile

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Confinement is what SQL on a handle can still reach once Confine has run: the files of these
// folders, and these settings. Whatever was attached before stays attached as it was (read-only
// files stay read-only).
type Confinement struct {
	// Dirs are the folders file functions (read_csv, read_text, glob, COPY …) may open, for
	// reading and writing alike (DuckDB's allowed_directories knows no difference); none = no file
	// at all. Each is allowed as given and as an absolute path, since DuckDB compares the text of
	// a path, not the file it names.
	Dirs []string
	// Files are single files it may open (DuckDB's allowed_paths), each with its write-ahead log:
	// DuckDB files a handle attaches after the confinement, read-only.
	Files []string
	// Configs are settings that stay changeable (DuckDB's allowed_configs). TimeZone always is:
	// every new connection of the pool sets it (Open), and it changes only how times print.
	Configs []string
}

// Confine locks the DuckDB instance behind db down, for every connection it has and will open
// (the settings are the database's, not a connection's): no file outside c.Dirs, no extension
// install or load beyond those linked in, no persistent secrets, and the configuration locked so
// that no statement undoes any of it. Run it after the handle's own ATTACHes and settings: from
// then on ATTACH of a new file outside c.Dirs fails too. DuckDB keeps allowing the files attached
// before (a read-only one could be detached and attached again writable): a handle that runs
// SQL from outside must also check each statement (internal/report's analyst SQL).
func Confine(ctx context.Context, db *sql.DB, c Confinement) error {
	dirs, err := allowedDirs(c.Dirs)
	if err != nil {
		return err
	}
	configs := append([]string{"TimeZone"}, c.Configs...)
	var files []string
	for _, f := range c.Files {
		if f == "" {
			continue
		}
		abs, err := filepath.Abs(f)
		if err != nil {
			return fmt.Errorf("file %s: %w", f, err)
		}
		for _, p := range []string{f, abs} {
			files = append(files, p, p+".wal")
		}
	}
	stmts := []string{
		"SET allowed_directories = " + listLiteral(dirs),
		"SET allowed_paths = " + listLiteral(files),
		"SET allowed_configs = " + listLiteral(configs),
		"SET allow_persistent_secrets = false",
		"SET allow_community_extensions = false",
		"SET autoinstall_known_extensions = false",
		"SET autoload_known_extensions = false",
		"SET enable_external_access = false",
		"SET lock_configuration = true",
	}
	conn, err := db.Conn(ctx)
	if err != nil {
		return fmt.Errorf("confine duckdb: %w", err)
	}
	defer conn.Close()
	for _, s := range stmts {
		if _, err := conn.ExecContext(ctx, s); err != nil {
			return fmt.Errorf("confine duckdb (%s): %w", s, err)
		}
	}
	return nil
}

// allowedDirs is each folder as given (cleaned) and as an absolute path, each with a trailing
// separator so that out does not also allow out2.
func allowedDirs(dirs []string) ([]string, error) {
	var out []string
	seen := map[string]bool{}
	add := func(p string) {
		p = filepath.Clean(p)
		if !strings.HasSuffix(p, string(filepath.Separator)) {
			p += string(filepath.Separator)
		}
		if !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	for _, d := range dirs {
		if d == "" {
			continue
		}
		abs, err := filepath.Abs(d)
		if err != nil {
			return nil, fmt.Errorf("folder %s: %w", d, err)
		}
		add(d)
		add(abs)
		// the folder may itself be a link (/tmp on some systems): DuckDB sees the path as written
		if real, err := filepath.EvalSymlinks(abs); err == nil {
			add(real)
		} else if !os.IsNotExist(err) {
			return nil, fmt.Errorf("folder %s: %w", d, err)
		}
	}
	return out, nil
}

func listLiteral(items []string) string {
	if len(items) == 0 {
		return "[]::VARCHAR[]"
	}
	q := make([]string, len(items))
	for i, s := range items {
		q[i] = QuoteLiteral(s)
	}
	return "[" + strings.Join(q, ", ") + "]"
}
