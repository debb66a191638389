package syncrun_test

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/billsync/billsync/internal/sandbox"
	"github.com/billsync/billsync/internal/syncrun"
)

// TestEnvelopeNotBelieved: a list page whose envelope breaks the spec or contradicts itself is read
// (every record it shows is kept) but cannot prove its list complete: the run publishes as
// partial, names the list, the page and the reason, and marks nothing deleted from it; the next
// run, against a service that behaves again, succeeds and mirrors.
func TestEnvelopeNotBelieved(t *testing.T) {
	tests := []struct {
		name   string
		faults sandbox.Faults
		want   string // in the customers stream's error and the log
	}{
		{"hasMore the string \"false\" with pageCount and total", sandbox.Faults{PathPrefix: "/hl/v1/customer", HasMoreString: 1},
			`GET /hl/v1/customer page 1: hasMore: "false" is a string, not a boolean`},
		{"data null with a total of 0 on a later sync", sandbox.Faults{PathPrefix: "/hl/v1/customer", NullData: 1},
			"GET /hl/v1/customer page 1: data: null, not an array"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, 0.05)
			o := e.opts()
			o.PageSize = 10 // several pages of customers
			e.sync(o)
			customers := e.count("SELECT count(*) FROM customers")
			if err := e.sb.SetFaults(tt.faults); err != nil {
				t.Fatal(err)
			}
			e.sb.Advance(time.Hour)
			peak := heapPeak()
			start := time.Now()
			sum := e.sync(o)
			took, heap := time.Since(start), peak()
			t.Logf("took %s, heap peak %d MiB, status %s, incomplete %v", took.Round(time.Millisecond), heap>>20, sum.Status(), sum.Incomplete)
			if sum.Status() != "partial" || !slices.Contains(sum.Incomplete, "customers") {
				t.Errorf("status %s, incomplete %v: want partial naming customers", sum.Status(), sum.Incomplete)
			}
			if took > stopBound || heap > heapBound {
				t.Errorf("took %s, heap %d MiB", took, heap>>20)
			}
			if runs := e.query(`SELECT status FROM sync_runs ORDER BY id`); len(runs) != 2 || runs[1][0] != "partial" {
				t.Errorf("runs %v, want the second partial", runs)
			}
			st := e.query(`SELECT complete, error FROM sync_streams WHERE stream = 'customers' ORDER BY run_id DESC LIMIT 1`)
			if st[0][0] != false || !strings.Contains(fmt.Sprint(st[0][1]), tt.want) || !strings.Contains(fmt.Sprint(st[0][1]), "nothing marked deleted") {
				t.Errorf("customers stream %v, want incomplete with %q", st, tt.want)
			}
			if !strings.Contains(e.logs.String(), "list envelope not believed") {
				t.Error("no warning logged")
			}
			if n := e.count("SELECT count(*) FROM customers WHERE deleted_upstream_at IS NOT NULL"); n != 0 {
				t.Errorf("%d customers marked deleted from a list that was not believed", n)
			}
			if n := e.count("SELECT count(*) FROM customers"); n < customers {
				t.Errorf("%d customers stored, %d before", n, customers)
			}
			e.sb.SetFaults(sandbox.Faults{})
			if sum := e.sync(o); sum.Status() != "succeeded" {
				t.Errorf("the next run against a behaving service: %s %v", sum.Status(), sum.Incomplete)
			}
			e.assertMirrors()
		})
	}
}

// TestNothingAnnouncedCeiling: a customer list that announces neither a page count nor a total
// and says hasMore forever (new records on every page) is stopped at a ceiling from the last
// complete read of customers, in seconds, with the ceiling's reason; nothing is published and the
// next run is healthy.
func TestNothingAnnouncedCeiling(t *testing.T) {
	e := newEnv(t, 0.02)
	e.sync(e.opts())
	known := e.count("SELECT records FROM sync_streams WHERE stream = 'customers'")
	before := fileHash(t, e.path)
	customerPages := func() (n int) {
		for _, r := range e.sb.Requests() {
			if r.Path == "/hl/v1/customer" {
				n++
			}
		}
		return n
	}
	firstPages := customerPages()
	if err := e.sb.SetFaults(sandbox.Faults{PathPrefix: "/hl/v1/customer", UnannouncedEndless: 1}); err != nil {
		t.Fatal(err)
	}
	peak := heapPeak()
	start := time.Now()
	_, err := syncrun.Run(context.Background(), e.path, []syncrun.Account{{Name: "test", Client: e.client()}}, e.opts())
	took, heap := time.Since(start), peak()
	t.Logf("stopped after %s, heap peak %d MiB: %v", took.Round(time.Millisecond), heap>>20, err)
	want := fmt.Sprintf("neither pageCount nor a total announced; the last complete read had %d records", known)
	if err == nil || !strings.Contains(err.Error(), "customers: GET /hl/v1/customer page ") || !strings.Contains(err.Error(), want) {
		t.Fatalf("error %v, want the ceiling located with %q", err, want)
	}
	pages := customerPages() - firstPages
	if ceiling := 2*int((known+99)/100) + 10; pages > ceiling+1 {
		t.Errorf("%d customer pages requested, want at most the ceiling %d and one", pages, ceiling)
	}
	if took > stopBound || heap > heapBound {
		t.Errorf("took %s, heap %d MiB", took, heap>>20)
	}
	if fileHash(t, e.path) != before {
		t.Error("the published warehouse changed")
	}
	e.sb.SetFaults(sandbox.Faults{})
	e.sync(e.opts())
	e.assertMirrors()
}

// TestDotIDs: customer ids "." and ".." are a located validation error of the customer list, and
// never a request path; nothing is published and the next run is healthy.
func TestDotIDs(t *testing.T) {
	e := newEnv(t, 0.02)
	e.sync(e.opts())
	before := fileHash(t, e.path)
	if err := e.sb.SetFaults(sandbox.Faults{PathPrefix: "/hl/v1/customer", DotIDs: 1}); err != nil {
		t.Fatal(err)
	}
	e.sb.Advance(time.Hour)
	_, err := syncrun.Run(context.Background(), e.path, []syncrun.Account{{Name: "test", Client: e.client()}}, e.opts())
	for _, w := range []string{"merge customers: ", "customers page 1 item 0 (id ", `id "." cannot be a path segment`} {
		if err == nil || !strings.Contains(err.Error(), w) {
			t.Errorf("error lacks %q: %v", w, err)
		}
	}
	for _, r := range e.sb.Requests() {
		if strings.HasSuffix(r.Path, "/.") || strings.HasSuffix(r.Path, "/..") || strings.Contains(r.Path, "/../") {
			t.Errorf("request sent to %s", r.Path)
		}
	}
	if fileHash(t, e.path) != before {
		t.Error("the published warehouse changed")
	}
	e.sb.SetFaults(sandbox.Faults{})
	e.sync(e.opts())
	e.assertMirrors()
}

// TestBuildFailingTwiceIsDiscarded: a run whose attempts fail the same way twice (a record the
// merge refuses) leaves no build to resume into that failure again: it is discarded, logged, and
// the next run starts from the published warehouse.
func TestBuildFailingTwiceIsDiscarded(t *testing.T) {
	e := newEnv(t, 0.01)
	e.sync(e.opts())
	if err := e.sb.SetFaults(sandbox.Faults{PathPrefix: "/hl/v1/reviews", EpochSeconds: 1}); err != nil {
		t.Fatal(err)
	}
	e.sb.Advance(time.Hour)
	for attempt := 1; attempt <= 2; attempt++ {
		_, err := syncrun.Run(context.Background(), e.path, []syncrun.Account{{Name: "test", Client: e.client()}}, e.opts())
		if err == nil || !strings.Contains(err.Error(), "looks like epoch seconds") {
			t.Fatalf("attempt %d: %v", attempt, err)
		}
		t.Logf("attempt %d: %v", attempt, err)
		// The sink's writer fails on reviews' merge whichever stream calls it next; the error
		// must name that merge only, or the two attempts would not compare equal.
		if !strings.HasPrefix(err.Error(), "account test: merge reviews: ") {
			t.Errorf("attempt %d: the error is labelled with another stream: %v", attempt, err)
		}
		_, statErr := os.Stat(e.path + ".building")
		if attempt == 1 && statErr != nil {
			t.Fatalf("after the first failure the build is gone: %v", statErr)
		}
		if attempt == 2 && statErr == nil {
			t.Fatal("after the second failure the same way the build is still there to resume")
		}
	}
	if !strings.Contains(e.logs.String(), "discarding the unpublished build: its run failed the same way twice") {
		t.Error("the discard is not logged")
	}
	e.sb.SetFaults(sandbox.Faults{})
	sum := e.sync(e.opts())
	if sum.Resumed {
		t.Error("the next run resumed a build")
	}
	e.assertMirrors()
}
