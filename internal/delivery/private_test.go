package delivery

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/billsync/billsync/internal/duckfile"
)

// TestDeliveryJournalIsPrivate: the delivery journal (what was sent to whom) is written only by
// the delivery that holds its lock, kept 0600 with its write-ahead log, and listed read-only:
// List takes no lock, so it lists while a delivery runs, and changes nothing (issue 35).
func TestDeliveryJournalIsPrivate(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "data", JournalName)
	j, err := openJournal(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := j.insert(ctx, row{name: "close", asOf: "2026-11-01", kind: "scheduled", state: "sent"}); err != nil {
		t.Fatal(err)
	}
	check := func(when string) {
		t.Helper()
		for _, p := range []string{path, path + ".wal"} {
			if fi, err := os.Stat(p); err == nil && fi.Mode().Perm() != 0o600 {
				t.Errorf("%s: %s is %v, want -rw-------", when, filepath.Base(p), fi.Mode().Perm())
			}
		}
	}
	check("written")
	if err := j.close(); err != nil {
		t.Fatal(err)
	}
	check("closed")
	lock, err := duckfile.Acquire(path) // a delivery running in another process
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Release()
	before, _ := os.ReadFile(path)
	es, err := List(ctx, path, "", 10)
	if err != nil || len(es) != 1 {
		t.Fatalf("List while a delivery holds the lock: %v, %d entries", err, len(es))
	}
	if after, _ := os.ReadFile(path); string(before) != string(after) {
		t.Error("List changed the journal")
	}
}
