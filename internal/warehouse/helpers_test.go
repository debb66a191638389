package warehouse

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/billsync/billsync/internal/entity"
	"github.com/billsync/billsync/internal/syncdata"
)

var quietLog = slog.New(slog.NewTextHandler(io.Discard, nil))

var t0 = time.Date(2026, 6, 1, 5, 0, 0, 0, time.UTC)

func newPath(t *testing.T) string {
	t.Helper()
	return filepath.Join(t.TempDir(), "billsync.duckdb")
}

func startBuild(t *testing.T, path string) *Build {
	t.Helper()
	return startBuildWith(t, path, BuildOptions{Log: quietLog})
}

// startBuildWith is startBuild with options other than the defaults.
func startBuildWith(t *testing.T, path string, opts BuildOptions) *Build {
	t.Helper()
	b, err := StartBuild(context.Background(), path, opts)
	if err != nil {
		t.Fatalf("StartBuild: %v", err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}

func startRun(t *testing.T, b *Build, account string) syncdata.Run {
	t.Helper()
	r, err := b.startRun(context.Background(), account, t0)
	if err != nil {
		t.Fatalf("StartRun: %v", err)
	}
	return r
}

// load stages records and merges them; full marks deletions after the merge, as a list read
// whole does.
func load(t *testing.T, b *Build, e entity.Name, run syncdata.Run, at time.Time, full bool, records ...string) syncdata.MergeResult {
	t.Helper()
	res, err := tryLoad(b, e, run, at, full, records...)
	if err != nil {
		t.Fatalf("load %s: %v", e, err)
	}
	return res
}

func tryLoad(b *Build, e entity.Name, run syncdata.Run, at time.Time, full bool, records ...string) (syncdata.MergeResult, error) {
	ctx := context.Background()
	l, err := b.newLoader(ctx, e, run.ID, run.Account, at)
	if err != nil {
		return syncdata.MergeResult{}, err
	}
	for i, r := range records {
		if err := l.Add(1+i/10, i%10, []byte(r)); err != nil {
			l.Merge(ctx)
			return syncdata.MergeResult{}, err
		}
	}
	res, err := l.Merge(ctx)
	if err != nil || !full || !entityDefs[e].deletes {
		return res, err
	}
	// full: the list was read whole, so what no merge of the run saw is gone (as List.Finish)
	res.Deleted, err = b.markDeleted(ctx, e, run.Account, run.ID, at)
	return res, err
}

// fixturesDir holds the fixtures: the spec's, copied byte for byte (laravel-mayar/), and those
// made up for a record the spec shows no sample of (invented/); testdata/fixtures/README.md.
var fixturesDir = filepath.Join("..", "..", "testdata", "fixtures")

// fixtureFolders are where a declaration's Fixture is looked for, the spec's first.
var fixtureFolders = []string{"laravel-mayar", "invented"}

// fixturePath is the file named name (an entity's Fixture) in one of root's fixture folders: an
// error names every folder when it is in none, and both files when it is in two (which is the
// fixture would depend on the order looked in).
func fixturePath(root, name string) (string, error) {
	var found, looked []string
	for _, dir := range fixtureFolders {
		p := filepath.Join(root, dir, name)
		looked = append(looked, p)
		if _, err := os.Stat(p); err == nil {
			found = append(found, p)
		}
	}
	switch len(found) {
	case 0:
		return "", fmt.Errorf("fixture %s: in none of %s", name, strings.Join(looked, ", "))
	case 1:
		return found[0], nil
	}
	return "", fmt.Errorf("fixture %s: in both %s: an invented fixture must not shadow the spec's", name, strings.Join(found, " and "))
}

// fixtureItems returns the `data` items (or the single `data` object) of a fixture file.
func fixtureItems(t *testing.T, name string) []string {
	t.Helper()
	p, err := fixturePath(fixturesDir, name)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatalf("fixture %s: %v", name, err)
	}
	var env struct {
		Data json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(b, &env); err != nil {
		t.Fatalf("fixture %s: %v", name, err)
	}
	var items []json.RawMessage
	if err := json.Unmarshal(env.Data, &items); err != nil {
		return []string{string(env.Data)}
	}
	out := make([]string, len(items))
	for i, it := range items {
		out[i] = string(it)
	}
	return out
}

func queryInt(t *testing.T, db *sql.DB, q string, args ...any) int64 {
	t.Helper()
	var n int64
	if err := db.QueryRow(q, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return n
}

func queryString(t *testing.T, db *sql.DB, q string, args ...any) string {
	t.Helper()
	var s sql.NullString
	if err := db.QueryRow(q, args...).Scan(&s); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return s.String
}
