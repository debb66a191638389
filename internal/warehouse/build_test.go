package warehouse

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/billsync/billsync/internal/config"
	"github.com/billsync/billsync/internal/entity"
	"github.com/billsync/billsync/internal/syncdata"
)

// publishOne builds path with the given customers and publishes it.
func publishOne(t *testing.T, path string, records ...string) {
	t.Helper()
	b, err := StartBuild(context.Background(), path, BuildOptions{Log: quietLog})
	if err != nil {
		t.Fatal(err)
	}
	run := startRun(t, b, "acct")
	load(t, b, entity.Customers, run, t0, true, records...)
	if err := b.finishRun(context.Background(), run.ID, syncdata.RunStats{Status: "succeeded"}); err != nil {
		t.Fatal(err)
	}
	if err := b.Publish(context.Background()); err != nil {
		t.Fatal(err)
	}
}

func countCustomers(t *testing.T, path string) int64 {
	t.Helper()
	db, err := OpenReadOnly(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	return queryInt(t, db, `SELECT count(*) FROM customers WHERE deleted_upstream_at IS NULL`)
}

func TestCloseWithoutPublishThenResume(t *testing.T) {
	ctx := context.Background()
	path := newPath(t)
	publishOne(t, path, `{"id":"a"}`)
	before, _ := os.ReadFile(path)

	b, err := StartBuild(ctx, path, BuildOptions{Log: quietLog})
	if err != nil {
		t.Fatal(err)
	}
	run := startRun(t, b, "acct")
	load(t, b, entity.Customers, run, t0, true, `{"id":"a"}`, `{"id":"b"}`)
	b.recordStream(ctx, run.ID, syncdata.StreamStats{Stream: "customers", Entity: "customers", Records: 2, Complete: true, Finished: t0})
	b.setCursor(ctx, "acct", "webhooks", "1741064767123", run.ID)
	if err := b.Close(); err != nil { // interrupted: no publish
		t.Fatal(err)
	}
	after, _ := os.ReadFile(path)
	if !bytes.Equal(before, after) {
		t.Fatal("published file changed without Publish")
	}

	b2, err := StartBuild(ctx, path, BuildOptions{Log: quietLog})
	if err != nil {
		t.Fatal(err)
	}
	defer b2.Close()
	if !b2.Resumed {
		t.Fatal("build not resumed")
	}
	again, err := b2.startRun(ctx, "acct", t0)
	if err != nil || again.ID != run.ID || !again.Resumed {
		t.Fatalf("StartRun after resume = %+v, %v; want run %d resumed", again, err, run.ID)
	}
	if done, _ := b2.streamDone(ctx, run.ID, "customers"); !done {
		t.Error("completed stream not reported done")
	}
	if done, _ := b2.streamDone(ctx, run.ID, "invoices"); done {
		t.Error("unstarted stream reported done")
	}
	if c, _ := b2.cursor(ctx, "acct", "webhooks"); c != "1741064767123" {
		t.Errorf("cursor %q", c)
	}
	if n := queryInt(t, b2.DB(), `SELECT count(*) FROM customers`); n != 2 {
		t.Errorf("resumed build has %d customers, want 2", n)
	}
}

func TestDiscardRemovesWorkFile(t *testing.T) {
	path := newPath(t)
	b, err := StartBuild(context.Background(), path, BuildOptions{Log: quietLog})
	if err != nil {
		t.Fatal(err)
	}
	startRun(t, b, "acct")
	if err := b.Discard(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path + ".building"); !os.IsNotExist(err) {
		t.Errorf(".building still there: %v", err)
	}
	b2 := startBuild(t, path)
	if b2.Resumed {
		t.Error("resumed a discarded build")
	}
}

func TestSecondBuildWhileLocked(t *testing.T) {
	path := newPath(t)
	startBuild(t, path)
	_, err := StartBuild(context.Background(), path, BuildOptions{Log: quietLog})
	want := fmt.Sprintf("sync already running: %s.lock held by pid %d", path, os.Getpid())
	if err == nil || err.Error() != want {
		t.Fatalf("err = %v, want %q", err, want)
	}
}

func TestCorruptedBuildingIsDiscarded(t *testing.T) {
	for name, content := range map[string][]byte{
		"garbage": bytes.Repeat([]byte("not a duckdb file "), 1000),
		"empty":   {},
	} {
		t.Run(name, func(t *testing.T) {
			path := newPath(t)
			publishOne(t, path, `{"id":"a"}`)
			if err := os.WriteFile(path+".building", content, 0o644); err != nil {
				t.Fatal(err)
			}
			b := startBuild(t, path)
			if b.Resumed {
				t.Fatal("resumed a corrupted build")
			}
			if n := queryInt(t, b.DB(), `SELECT count(*) FROM customers`); n != 1 {
				t.Errorf("fresh build has %d customers, want the published 1", n)
			}
		})
	}
}

func TestOpenReadOnlyMissingFile(t *testing.T) {
	_, err := OpenReadOnly(context.Background(), "/nonexistent/billsync.duckdb")
	if err == nil || !strings.Contains(err.Error(), "does not exist yet") {
		t.Fatalf("err = %v", err)
	}
}

func TestOpenWithoutHome(t *testing.T) {
	t.Setenv("HOME", "")
	os.Unsetenv("HOME")
	path := newPath(t)
	publishOne(t, path, `{"id":"a"}`)
	if n := countCustomers(t, path); n != 1 {
		t.Errorf("%d customers", n)
	}
}

// Publishing while another process reads: the reader re-opens the file in a
// loop and must always see a complete state (1 or 2 customers), never an error.
func TestReaderInChildProcessDuringPublish(t *testing.T) {
	if path := os.Getenv("BILLSYNC_READER_PATH"); path != "" {
		readerChild(path)
		return
	}
	path := newPath(t)
	publishOne(t, path, `{"id":"a"}`)
	cmd := exec.Command(os.Args[0], "-test.run=^TestReaderInChildProcessDuringPublish$")
	cmd.Env = append(os.Environ(), "BILLSYNC_READER_PATH="+path)
	var errOut bytes.Buffer
	cmd.Stderr = &errOut
	stdout, _ := cmd.StdoutPipe()
	stdin, _ := cmd.StdinPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// The child says when it holds the old file: on a loaded machine its start can take longer
	// than any fixed wait.
	r := bufio.NewReader(stdout)
	if line, err := r.ReadString('\n'); line != "opened\n" {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("reader did not open the file: %q %v\n%s", line, err, errOut.String())
	}
	publishOne(t, path, `{"id":"a"}`, `{"id":"b"}`)
	time.Sleep(300 * time.Millisecond) // the reader reopens across the publish meanwhile
	stdin.Close()                      // tells the child to stop
	rest, _ := io.ReadAll(r)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("reader failed: %v\n%s%s", err, rest, errOut.String())
	}
	seen := string(rest)
	if !strings.Contains(seen, "old=1") || !strings.Contains(seen, "new=2") {
		t.Errorf("reader output %q: want the held handle to keep 1 and a reopen to see 2", seen)
	}
	if n := countCustomers(t, path); n != 2 {
		t.Errorf("published file has %d customers", n)
	}
}

// readerChild holds one read-only handle and opens another each round; it exits
// non-zero on any error or impossible count.
func readerChild(path string) {
	ctx := context.Background()
	held, err := OpenReadOnly(ctx, path)
	if err != nil {
		fmt.Println("open:", err)
		os.Exit(1)
	}
	fmt.Println("opened")
	stop := make(chan struct{})
	go func() { os.Stdin.Read(make([]byte, 1)); close(stop) }()
	var last int64
	for {
		var n int64
		if err := held.QueryRow(`SELECT count(*) FROM customers`).Scan(&n); err != nil || n != 1 {
			fmt.Println("held handle:", n, err)
			os.Exit(1)
		}
		db, err := OpenReadOnly(ctx, path)
		if err == nil {
			err = db.QueryRow(`SELECT count(*) FROM customers`).Scan(&last)
			db.Close()
		}
		if err != nil || (last != 1 && last != 2) {
			fmt.Println("reopen:", last, err)
			os.Exit(1)
		}
		select {
		case <-stop:
			// within a process DuckDB shares one instance per path: only after
			// every handle closes does a reopen see the renamed-in file
			held.Close()
			db, err := OpenReadOnly(ctx, path)
			if err == nil {
				err = db.QueryRow(`SELECT count(*) FROM customers`).Scan(&last)
			}
			fmt.Printf("old=%d new=%d err=%v\n", n, last, err)
			os.Exit(0)
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// TestBuildMemoryLimit: the build's DuckDB gets the memory limit asked for, or the default.
func TestBuildMemoryLimit(t *testing.T) {
	for _, c := range []struct{ limit, want string }{{"", "152.5 MiB"}, {"300MB", "286.1 MiB"}, {"1GiB", "1.0 GiB"}} {
		b, err := StartBuild(context.Background(), newPath(t), BuildOptions{Log: quietLog, Build: config.Build{MemoryLimit: c.limit}})
		if err != nil {
			t.Fatal(err)
		}
		if got := queryString(t, b.DB(), `SELECT current_setting('memory_limit')`); got != c.want {
			t.Errorf("limit %q: DuckDB has %s, want %s", c.limit, got, c.want)
		}
		b.Discard()
	}
}

// TestBuildKeepMemory: the build's DuckDB keeps the buffer memory asked for (none by default),
// merges run on it, and it is the build's alone: a later build without it keeps none.
func TestBuildKeepMemory(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct{ keep, want string }{{"64MB", "61.0 MiB"}, {"", "0 bytes"}, {"1MB", "976.5 KiB"}} {
		b, err := StartBuild(ctx, newPath(t), BuildOptions{Log: quietLog, KeepMemory: c.keep})
		if err != nil {
			t.Fatal(err)
		}
		if got := queryString(t, b.DB(), `SELECT current_setting('block_allocator_memory')`); got != c.want {
			t.Errorf("keep %q: DuckDB keeps %s, want %s", c.keep, got, c.want)
		}
		items := fixtureItems(t, "Invoices__invoice-list-response.json")
		run := startRun(t, b, "acct")
		if res := load(t, b, entity.Invoices, run, t0, true, items...); res.Inserted != int64(len(items)) {
			t.Errorf("keep %q: inserted %d of %d invoices", c.keep, res.Inserted, len(items))
		}
		b.Discard()
	}
}
