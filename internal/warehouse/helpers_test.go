package warehouse

import (
	"context"
	"database/sql"
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"path/filepath"
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

// fixtureItems returns the `data` items (or the single `data` object) of a fixture file.
func fixtureItems(t *testing.T, name string) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "fixtures", "laravel-mayar", name))
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
