package syncrun_test

import (
	"bufio"
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/billsync/billsync/internal/api"
	"github.com/billsync/billsync/internal/config"
	"github.com/billsync/billsync/internal/fetch"
	"github.com/billsync/billsync/internal/sandbox"
	"github.com/billsync/billsync/internal/syncrun"
	"github.com/billsync/billsync/internal/warehouse"
)

// Child processes: the test binary re-executes itself with BILLSYNC_TEST_CHILD set, so a sync can
// be SIGKILLed and a reader can hold the file from another process, as an analyst's DuckDB would.
func TestMain(m *testing.M) {
	switch os.Getenv("BILLSYNC_TEST_CHILD") {
	case "sync":
		os.Exit(childSync())
	case "reader":
		os.Exit(childReader())
	}
	os.Exit(m.Run())
}

func childSync() int {
	c, err := api.New(api.Config{BaseURL: os.Getenv("BILLSYNC_TEST_URL"), APIKey: testKey, Unlimited: true})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	_, err = syncrun.Run(context.Background(), os.Getenv("BILLSYNC_TEST_DB"),
		[]syncrun.Account{{Name: "test", Client: c}}, syncrun.Options{Options: fetch.Options{Account: "test", Fetch: config.Fetch{Concurrency: 2, Details: true, MaxClockSkew: fetch.TrustServiceClock}}})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// childReader opens the published file read-only over and over until stdin closes, printing
// "ok <invoices> <runs>" or "err <message>" per read.
func childReader() int {
	path := os.Getenv("BILLSYNC_TEST_DB")
	stop := make(chan struct{})
	go func() { io.Copy(io.Discard, os.Stdin); close(stop) }()
	for {
		select {
		case <-stop:
			return 0
		default:
		}
		db, err := warehouse.OpenReadOnly(context.Background(), path)
		if err == nil {
			var inv, runs int64
			err = db.QueryRow(`SELECT (SELECT count(*) FROM invoices), (SELECT count(*) FROM sync_runs)`).Scan(&inv, &runs)
			db.Close()
			if err == nil {
				fmt.Printf("ok %d %d\n", inv, runs)
				continue
			}
		}
		fmt.Printf("err %s\n", strings.ReplaceAll(err.Error(), "\n", " "))
	}
}

func child(t *testing.T, mode string, e *env) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "BILLSYNC_TEST_CHILD="+mode, "BILLSYNC_TEST_URL="+e.srv.URL, "BILLSYNC_TEST_DB="+e.path)
	cmd.Stderr = os.Stderr
	return cmd
}

func fileHash(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("%x", sha256.Sum256(b))
}

func TestKilledSyncLeavesPreviousWarehouse(t *testing.T) {
	e := newEnv(t, 0.05)
	e.sync(e.opts())
	before := fileHash(t, e.path)
	invoices := e.count("SELECT count(*) FROM invoices")

	// Past the credit refresh bound, so every customer's credit is due and the run is long
	// enough to be killed in the middle.
	e.sb.Advance(8 * 24 * time.Hour)
	// Slow every response so the child is surely mid-run when it is killed.
	if err := e.sb.SetFaults(sandbox.Faults{Seed: 1, Slow: 1, SlowMs: 15}); err != nil {
		t.Fatal(err)
	}
	seen := len(e.sb.Requests())
	cmd := child(t, "sync", e)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for len(e.sb.Requests()) < seen+40 {
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatal("the child sync never got going")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if err := cmd.Process.Kill(); err != nil { // SIGKILL: no deferred cleanup runs
		t.Fatal(err)
	}
	cmd.Wait()

	if got := fileHash(t, e.path); got != before {
		t.Fatal("the published warehouse changed although the sync was killed")
	}
	if n := e.count("SELECT count(*) FROM invoices"); n != invoices {
		t.Fatalf("published warehouse has %d invoices, want the previous run's %d", n, invoices)
	}
	if _, err := os.Stat(e.path + ".building"); err != nil {
		t.Fatalf("the killed run's build is gone, nothing to resume: %v", err)
	}

	e.sb.SetFaults(sandbox.Faults{})
	sum := e.sync(e.opts())
	if !sum.Resumed {
		t.Error("the next run did not resume the killed run's build")
	}
	e.assertMirrors()
	if n := e.count("SELECT count(*) FROM sync_runs WHERE status = 'succeeded'"); n != 2 {
		t.Errorf("%d succeeded runs, want 2 (the first and the resumed one)", n)
	}
}

func TestReaderDuringSyncSeesOldOrNew(t *testing.T) {
	e := newEnv(t, 0.05)
	e.sync(e.opts())
	oldInvoices := e.count("SELECT count(*) FROM invoices")

	reader := child(t, "reader", e)
	stdin, err := reader.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := reader.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := reader.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan string, 1<<16)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	// Let the reader get going before the sync starts.
	first := <-lines

	e.sb.Advance(30 * 24 * time.Hour)
	e.sync(e.opts())
	newInvoices := e.count("SELECT count(*) FROM invoices")
	// Reads until one of the new file, or for 10 s: a loaded machine can stall the reader
	// longer than any fixed wait.
	reads := []string{first}
	deadline := time.After(10 * time.Second)
wait:
	for {
		select {
		case l, ok := <-lines:
			if !ok {
				break wait
			}
			reads = append(reads, l)
			if f := strings.Fields(l); len(f) > 1 && f[1] == strconv.FormatInt(newInvoices, 10) {
				break wait
			}
		case <-deadline:
			break wait
		}
	}
	stdin.Close()
	if err := reader.Wait(); err != nil {
		t.Fatalf("reader: %v", err)
	}
	for l := range lines {
		reads = append(reads, l)
	}
	sawNew := false
	for _, l := range reads {
		f := strings.Fields(l)
		if f[0] != "ok" {
			t.Fatalf("reader got an error during the sync: %s", l)
		}
		n, _ := strconv.ParseInt(f[1], 10, 64)
		switch n {
		case oldInvoices:
		case newInvoices:
			sawNew = true
		default:
			t.Fatalf("reader saw %d invoices: neither the old %d nor the new %d", n, oldInvoices, newInvoices)
		}
	}
	if oldInvoices == newInvoices {
		t.Fatal("the clock advance changed no invoice count; the test proves nothing")
	}
	if !sawNew {
		t.Errorf("the reader never saw the published state in %d reads", len(reads))
	}
	t.Logf("%d reads, all old (%d) or new (%d)", len(reads), oldInvoices, newInvoices)
}
