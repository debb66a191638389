package report

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/billsync/billsync/internal/config"
	"github.com/billsync/billsync/internal/jobs"
)

// analystSetup is a warehouse folder (data/: the warehouse, its job journal with one plan, a job
// plan file), an output folder (out/) and a folder outside both, the test's working directory
// being their parent, as an analyst's shell is.
type analystSetup struct {
	dir, data, db, journal, out, outside string
}

func newAnalystSetup(t *testing.T) *analystSetup {
	t.Helper()
	w := testWorld(t)
	dir := t.TempDir()
	s := &analystSetup{dir: dir, data: filepath.Join(dir, "data"), out: filepath.Join(dir, "out"), outside: filepath.Join(dir, "outside")}
	s.db, s.journal = filepath.Join(s.data, "billsync.duckdb"), filepath.Join(s.data, jobs.JournalFile)
	for _, d := range []string{s.data, filepath.Join(s.data, "jobs"), s.out, s.outside} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := copyFile(w.db, s.db); err != nil {
		t.Fatal(err)
	}
	j, err := jobs.OpenJournal(context.Background(), s.journal)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := j.DB().Exec("INSERT INTO job_plans (id, kind, account, plan_hash, input_file, input_sha256, actions, created_at, created_by, host) VALUES ('p1', 'credit-topup', 'main', 'h', 'in.csv', 's', 1, now(), 'siti', 'h')"); err != nil {
		t.Fatal(err)
	}
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	for p, body := range map[string]string{
		filepath.Join(s.out, "a.csv"):                "x\n1\n",
		filepath.Join(s.data, "jobs", "plan-p1.csv"): "seq,amount\n1,500\n",
		filepath.Join(s.outside, "secret.csv"):       "secret\nhunter2\n",
	} {
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Chdir(dir)
	return s
}

func (s *analystSetup) query(sql string, mod ...func(*Options)) (string, error) {
	o := Options{DB: "data/billsync.duckdb", Report: config.Report{ReportsOut: "out"}}
	for _, m := range mod {
		m(&o)
	}
	var out bytes.Buffer
	_, err := Query(context.Background(), o, sql, "csv", &out)
	return out.String(), err
}

// files is every file under dir with its content's hash: what must not change.
func files(t *testing.T, dir string) map[string][32]byte {
	t.Helper()
	m := map[string][32]byte{}
	err := filepath.WalkDir(dir, func(p string, e os.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		m[p] = sha256.Sum256(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestAnalystSQLLeastPrivilege tries each way an analyst's SQL could change the warehouse, the
// journal or another file billsync owns, or reach files outside its folders (issue 35): each
// fails with an error saying what is refused, and no file of the warehouse folder or outside
// changes, while the analyst's legitimate queries run.
func TestAnalystSQLLeastPrivilege(t *testing.T) {
	s := newAnalystSetup(t)
	before, outsideBefore := files(t, s.data), files(t, s.outside)
	q := func(p string) string { return "'" + p + "'" }
	tmp := filepath.Join(os.TempDir(), fmt.Sprintf("billsync-analyst-%d.csv", os.Getpid())) // outside, absolute
	os.Remove(tmp)
	for _, tc := range []struct{ name, sql, want string }{
		{"re-attach the journal writable", "DETACH journal; ATTACH " + q(s.journal) + " AS journal (READ_WRITE); DELETE FROM journal.job_plans", "DETACH is not allowed"},
		{"detach alone", "DETACH journal", "DETACH is not allowed"},
		{"attach the journal again", "ATTACH " + q(s.journal) + " AS j2 (READ_WRITE)", "ATTACH is not allowed"},
		{"attach the warehouse writable", "ATTACH 'data/billsync.duckdb' AS w2", "ATTACH is not allowed"},
		{"attach another file", "ATTACH 'out/new.duckdb' AS n", "ATTACH is not allowed"},
		{"attach memory", "ATTACH ':memory:' AS m", "ATTACH is not allowed"},
		{"delete from the journal", "DELETE FROM journal.job_plans", "DELETE is not allowed"},
		{"a fake approval", "INSERT INTO journal.job_approvals (plan_id, approved_by) VALUES ('p1', 'siti')", "INSERT is not allowed"},
		{"update the warehouse", "UPDATE customers SET name = 'x'", "UPDATE is not allowed"},
		{"create a table in the journal", "CREATE TABLE journal.t (a INT)", "CREATE is not allowed"},
		{"create a table in the warehouse", "CREATE TABLE t AS SELECT 1", "CREATE is not allowed"},
		{"a macro calling out", "CREATE TEMP MACRO m() AS TABLE SELECT * FROM read_text('outside/secret.csv')", "Permission Error"},
		{"a secret", "CREATE PERSISTENT SECRET s (TYPE http)", "CREATE is not allowed"},
		{"drop", "DROP VIEW credit_balance_reports", "DROP is not allowed"},
		{"external access back on", "SET enable_external_access = true", "configuration has been locked"},
		{"unlock", "SET lock_configuration = false", "configuration has been locked"},
		{"reset the lock", "RESET lock_configuration", "configuration has been locked"},
		{"more folders", "SET allowed_directories = ['/']", "configuration has been locked"},
		{"more settings", "SET allowed_configs = ['enable_external_access']", "configuration has been locked"},
		{"spill elsewhere", "SET temp_directory = 'outside'", "configuration has been locked"},
		{"extensions from elsewhere", "SET extension_directory = 'outside'", "configuration has been locked"},
		{"autoload", "SET autoload_known_extensions = true", "configuration has been locked"},
		{"profiling to a file", "PRAGMA enable_profiling", "PRAGMA is not allowed"},
		{"profiling output", "PRAGMA profiling_output = 'outside/p.json'", "PRAGMA is not allowed"},
		{"import a database", "PRAGMA import_database('out')", "PRAGMA is not allowed"},
		{"install", "INSTALL httpfs", "INSTALL or LOAD is not allowed"},
		{"load", "LOAD httpfs", "INSTALL or LOAD is not allowed"},
		{"read outside", "SELECT * FROM read_csv('outside/secret.csv')", "Permission Error"},
		{"read outside, absolute", "SELECT * FROM read_csv(" + q(filepath.Join(s.outside, "secret.csv")) + ")", "Permission Error"},
		{"read up and out", "SELECT * FROM read_csv('out/../outside/secret.csv')", "Permission Error"},
		{"read /etc", "SELECT * FROM read_csv('/etc/passwd')", "Permission Error"},
		{"read_text outside", "SELECT * FROM read_text('outside/secret.csv')", "Permission Error"},
		{"read_blob outside", "SELECT * FROM read_blob('/etc/hostname')", "Permission Error"},
		{"glob outside", "SELECT * FROM glob('/etc/*')", "Permission Error"},
		{"a file as a table", "SELECT * FROM 'outside/secret.csv'", "Permission Error"},
		{"copy outside", "COPY (SELECT 1) TO 'outside/x.csv'", "outside the output folder"},
		{"copy to /tmp", "COPY (SELECT 1) TO " + q(tmp), "outside the output folder"},
		{"copy up and out", "COPY (SELECT 1) TO 'out/../outside/x.csv'", "outside the output folder"},
		{"copy over the journal's wal", "COPY (SELECT 1) TO 'data/billsync-jobs.duckdb.wal'", "outside the output folder"},
		{"copy over the journal", "COPY (SELECT 1) TO 'data/billsync-jobs.duckdb'", "outside the output folder"},
		{"copy over the warehouse", "COPY customers TO 'data/billsync.duckdb'", "outside the output folder"},
		{"copy over a plan", "COPY (SELECT 1) TO 'data/jobs/plan-p1.csv'", "outside the output folder"},
		{"copy, the path in a pattern", "COPY (SELECT 1 AS a, 2 AS b) TO 'out/p' (PARTITION_BY a, FILENAME_PATTERN '../../outside/x_{i}')", "names a folder"},
		{"copy to a url", "COPY (SELECT 1) TO 'file:///tmp/x.csv'", "not a plain file path"},
		{"copy home", "COPY (SELECT 1) TO '~/x.csv'", "not a plain file path"},
		{"copy from", "COPY customers FROM 'out/a.csv'", "only COPY … TO a file"},
		{"copy to an expression", "COPY (SELECT 1) TO getvariable('f')", "quoted path"},
		{"export", "EXPORT DATABASE 'out/exp'", "EXPORT DATABASE is not allowed"},
		{"checkpoint", "CHECKPOINT", "CALL (or CHECKPOINT) is not allowed"},
		{"checkpoint the journal", "CHECKPOINT journal", "CALL (or CHECKPOINT) is not allowed"},
		{"checkpoint as a function", "SELECT * FROM checkpoint()", "checkpoint() is not allowed"},
		{"call", "CALL pragma_version()", "CALL (or CHECKPOINT) is not allowed"},
		{"call logging", "CALL enable_logging()", "enable_logging() is not allowed"},
		{"logging to files", "SELECT * FROM enable_logging(storage = 'file', storage_config = {'path': 'out/log'})", "enable_logging() is not allowed"},
		{"logging, qualified", "SELECT * FROM system.main.enable_logging()", "enable_logging() is not allowed"},
		{"sql from text", "SELECT * FROM query('SELECT 1')", "query() is not allowed"},
		{"explain analyze", "EXPLAIN ANALYZE COPY (SELECT 1) TO 'data/x.csv'", "EXPLAIN ANALYZE"},
		{"prepare", "PREPARE p AS SELECT 1", "PREPARE is not allowed"},
		{"vacuum", "VACUUM", "VACUUM is not allowed"},
		{"a second statement", "SELECT 1; DETACH journal", "statement 2: DETACH is not allowed"},
		{"hidden after a comment", "SELECT 1 -- ; \n; /* ; */ INSTALL httpfs", "statement 2: INSTALL or LOAD is not allowed"},
		{"hidden after a string", "SELECT ';'; DELETE FROM journal.job_plans", "statement 2: DELETE is not allowed"},
		{"hidden in a dollar string", "SELECT $x$;$x$; ATTACH ':memory:' AS m", "statement 2: ATTACH is not allowed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := s.query(tc.sql)
			if err == nil {
				t.Fatalf("ran: %s", out)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q, want it to say %q", err, tc.want)
			}
			if strings.Contains(err.Error(), "Permission Error") && !strings.Contains(err.Error(), "BILLSYNC_SQL_FILES") {
				t.Errorf("a refused file does not say which folders analyst SQL reaches: %v", err)
			}
		})
	}
	if after := files(t, s.data); !maps.Equal(before, after) {
		t.Errorf("the warehouse folder changed:\nbefore %v\nafter  %v", keys(before), keys(after))
	}
	if after := files(t, s.outside); !maps.Equal(outsideBefore, after) {
		t.Errorf("the folder outside changed: %v", keys(after))
	}
	if _, err := os.Stat(tmp); err == nil {
		os.Remove(tmp)
		t.Errorf("a COPY wrote %s", tmp)
	}

	// What analysts do (docs/warehouse.md) still runs.
	for _, tc := range []struct{ name, sql, want string }{
		{"the journal", "SELECT count(*) AS plans FROM journal.job_plans", "1"},
		{"the journal's view", "SELECT count(*) AS n FROM credit_balance_reports", "0"},
		{"a file in the output folder", "SELECT sum(x) AS s FROM read_csv('out/a.csv')", "1"},
		{"a file in the output folder, absolute", "SELECT sum(x) AS s FROM read_csv(" + q(filepath.Join(s.out, "a.csv")) + ")", "1"},
		{"a plan file in the warehouse folder", "SELECT sum(amount) AS s FROM read_csv('data/jobs/plan-*.csv')", "500"},
		{"copy into the output folder", "COPY (SELECT 7 AS a) TO 'out/seven.parquet'", ""},
		{"read it back", "SELECT a FROM read_parquet('out/seven.parquet')", "7"},
		{"partitioned", "COPY (SELECT 1 AS a, 2 AS b) TO 'out/part' (PARTITION_BY a, OVERWRITE_OR_IGNORE)", ""},
		{"copy a table", "COPY (SELECT id FROM customers LIMIT 2) TO 'out/ids.csv' (HEADER)", ""},
		{"variables", "SET VARIABLE x = 41; SELECT getvariable('x') + 1 AS answer", "42"},
		{"reset a variable", "SET VARIABLE x = 1; RESET VARIABLE x; SELECT getvariable('x') IS NULL AS gone", "true"},
		{"the session's zone", "SET TimeZone = 'UTC'; SELECT current_setting('TimeZone') AS tz", "UTC"},
		{"describe", "DESCRIBE customers", "raw_hash"},
		{"show tables", "SHOW TABLES", "customers"},
		{"summarize", "SUMMARIZE SELECT 1 AS a", "INTEGER"},
		{"table_info", "PRAGMA table_info('customers')", "raw_hash"},
		{"explain", "EXPLAIN SELECT count(*) FROM customers", "physical_plan"},
		{"a transaction", "BEGIN; SELECT 1 AS one; COMMIT; SELECT 2 AS two", "2"},
		{"a report's query", "SELECT count(*) AS n FROM aging_items(DATE '2026-06-06', 'due', 'Asia/Jakarta')", "n"},
		{"a column named like a function", "SELECT 1 AS query, 'checkpoint' AS \"checkpoint\"", "query"},
	} {
		t.Run("allowed/"+tc.name, func(t *testing.T) {
			out, err := s.query(tc.sql)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(out, tc.want) {
				t.Errorf("output lacks %q:\n%s", tc.want, out)
			}
		})
	}
	if _, err := os.Stat(filepath.Join(s.out, "ids.csv")); err != nil {
		t.Errorf("the COPY into the output folder wrote nothing: %v", err)
	}

	t.Run("BILLSYNC_SQL_FILES widens both", func(t *testing.T) {
		wider := func(o *Options) { o.SQLFiles = "outside" }
		if out, err := s.query("SELECT secret FROM read_csv('outside/secret.csv')", wider); err != nil || !strings.Contains(out, "hunter2") {
			t.Errorf("read: %q, %v", out, err)
		}
		if _, err := s.query("COPY (SELECT 1 AS a) TO 'outside/b.csv'", wider); err != nil {
			t.Errorf("write: %v", err)
		}
		// but never into billsync's own folder, even when named
		if _, err := s.query("COPY (SELECT 1 AS a) TO 'data/b.csv'", func(o *Options) { o.SQLFiles = "data" }); err == nil || !strings.Contains(err.Error(), "billsync's own files") {
			t.Errorf("a write into the warehouse folder named in BILLSYNC_SQL_FILES: %v", err)
		}
	})

	t.Run("output folder inside the warehouse folder", func(t *testing.T) {
		in := func(o *Options) { o.ReportsOut = "data/out" }
		if _, err := s.query("COPY (SELECT 1 AS a) TO 'data/out/b.csv'", in); err != nil {
			t.Errorf("write into it: %v", err)
		}
		if _, err := s.query("COPY (SELECT 1 AS a) TO 'data/billsync-jobs.duckdb.wal'", func(o *Options) { o.ReportsOut = "data" }); err == nil || !strings.Contains(err.Error(), "billsync's own files") {
			t.Errorf("the output folder is the warehouse folder, a COPY over the journal's wal: %v", err)
		}
	})

	t.Run("a link out of the output folder", func(t *testing.T) {
		link := filepath.Join(s.out, "etc")
		if err := os.Symlink(s.outside, link); err != nil {
			t.Fatal(err)
		}
		defer os.Remove(link)
		for _, sql := range []string{"SELECT * FROM read_csv('out/etc/secret.csv')", "COPY (SELECT 1) TO 'out/etc/x.csv'", "SELECT 1"} {
			if _, err := s.query(sql); err == nil || !strings.Contains(err.Error(), "symbolic link") {
				t.Errorf("%s: %v", sql, err)
			}
		}
		if _, err := os.Stat(filepath.Join(s.outside, "x.csv")); err == nil {
			t.Error("a COPY wrote through the link")
		}
		// a link that stays inside is fine
		os.Remove(link)
		if err := os.Symlink(filepath.Join(s.data, "jobs"), link); err != nil {
			t.Fatal(err)
		}
		if out, err := s.query("SELECT sum(amount) AS s FROM read_csv('out/etc/plan-p1.csv')"); err != nil || !strings.Contains(out, "500") {
			t.Errorf("a link inside the folders: %q, %v", out, err)
		}
	})
}

func keys(m map[string][32]byte) []string {
	var k []string
	for p := range m {
		k = append(k, p)
	}
	slices.Sort(k)
	return k
}
