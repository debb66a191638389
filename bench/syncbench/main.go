// Command syncbench measures a full sync against the simulator running in a separate process, so
// the figures are the syncer's own: requests used against the minimum the data allows, wall time,
// records per second and peak RSS.
//
//	go run ./bench/syncbench -scale 1,10,100          # unthrottled, one line per scale
//	go run ./bench/syncbench -scale 1 -rate 2000      # the real 20/min limit simulated at 100x speed
//	go run ./bench/syncbench -scale 100 -lists-only   # the list phase alone, with CPU per process
//	go run ./bench/syncbench -scale 100 -runs 3       # then two nightly syncs, a simulated day apart, with their credit reads
//	go run ./bench/syncbench -scale 1 -runs 15        # two weeks of nightly runs: credit reads per night and per refresh period, and the ceiling
//	go run ./bench/syncbench -scale 100 -lists-only -floor   # the list phase against its floor (floor.go)
//	go run ./bench/syncbench -scale 10 -runs 2 -lake  # each run also commits to an Iceberg lake (SQLite catalog, local files): the commit's share of the run, the lake's size
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/billsync/billsync/internal/api"
	"github.com/billsync/billsync/internal/config"
	"github.com/billsync/billsync/internal/entity"
	"github.com/billsync/billsync/internal/fetch"
	"github.com/billsync/billsync/internal/lake"
	"github.com/billsync/billsync/internal/sandbox"
	"github.com/billsync/billsync/internal/syncrun"
)

const key = "bench-key"

var (
	benchLog       = slog.New(slog.DiscardHandler)
	listsOnly      bool
	runs           int
	advance        time.Duration
	memoryLimit    string
	keepMemory     string
	rowGroupSize   int
	keep           string
	floor          bool
	memTraceOut    string
	heapProfileOut string
	creditRefresh  time.Duration
	lakeBench      bool
	benchLake      *lake.Lake

	startProfile = func() {}
	// lastRunWritten is what the last run wrote (writtenMB), for the floor's comparison.
	lastRunWritten float64
)

func main() {
	serve := flag.Bool("serve", false, "internal: run the simulator and print its address")
	scales := flag.String("scale", "1,10", "comma-separated simulator scales")
	rate := flag.Float64("rate", 0, "client requests per minute; 0 = unthrottled")
	details := flag.Bool("details", false, "include the one-time detail fan-out")
	syncer := config.Defaults[config.Fetch]() // the syncer's settings, where a flag does not say
	conc := flag.Int("concurrency", syncer.Concurrency, "requests in flight")
	logSync := flag.Bool("log", false, "write the syncer's log (merges, streams, each merge step's time) to stderr")
	flag.StringVar(&memoryLimit, "memory-limit", "", "DuckDB's memory limit while building (default: the syncer's)")
	flag.StringVar(&keepMemory, "keep-memory", "", "buffer memory DuckDB keeps for reuse while building (its block allocator), e.g. 160MB; default none, as the syncer")
	flag.IntVar(&rowGroupSize, "row-group", 0, "rows per row group the build (and the floor's load) writes, and a list batch's records (default: the syncer's)")
	flag.StringVar(&keep, "keep", "", "move the warehouse the last run published to this path (one scale), to measure reading it")
	flag.IntVar(&runs, "runs", 1, "syncs per scale into the same warehouse; later ones are incremental")
	flag.DurationVar(&advance, "advance", 24*time.Hour, "simulated time between runs (the simulator's clock moves, records change)")
	flag.DurationVar(&creditRefresh, "credit-refresh", syncer.CreditRefresh, "the syncer's BILLSYNC_CREDIT_REFRESH: every customer's credit read at least this often; with -runs, credit reads are also added up per period of this length")
	flag.BoolVar(&listsOnly, "lists-only", false, "sync the lists and webhooks only: a budget of one request leaves the fan-outs for later")
	flag.BoolVar(&floor, "floor", false, "first measure the floor of the list phase against the same simulator (its reads alone, then read_json loads of what they read) and compare the first run's list phase with it")
	flag.StringVar(&memTraceOut, "memtrace", "", "append each run's memory time series (RSS, Go heap, DuckDB by tag, every 250 ms; MB, tab-separated) to this file")
	flag.StringVar(&heapProfileOut, "heapprofile", "", "write Go's heap profile here each time the sampled RSS reaches a new high, so it shows the heap at the peak")
	flag.BoolVar(&lakeBench, "lake", false, "commit each run to an Iceberg lake (SQLite catalog, local files, in the run's temporary directory) and say what the commit took and the lake's size")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile of the syncer side here")
	flag.Parse()
	if *cpuprofile != "" {
		f, err := os.Create(*cpuprofile)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		// with -floor the profile starts after the floor, so it shows the syncer alone
		startProfile = sync.OnceFunc(func() { pprof.StartCPUProfile(f) })
		defer pprof.StopCPUProfile()
	}
	if *logSync {
		benchLog = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	if *serve {
		runServer(flag.Arg(0))
		return
	}
	fmt.Printf("%-6s %9s %8s %8s %6s %9s %11s %9s | %9s %8s %11s | %8s %8s %9s\n", "scale", "records", "requests", "minimum",
		"ratio", "wall", "records/s", "peak RSS", "list recs", "lists", "list rec/s", "fan-out", "took", "req/s")
	for _, s := range strings.Split(*scales, ",") {
		if err := benchScale(s, *rate, *details, *conc); err != nil {
			fmt.Fprintln(os.Stderr, "syncbench:", err)
			return
		}
	}
}

// runServer is the child process: it seeds the simulator, serves it on a loopback port and
// prints the address and the minimum request count on stdout.
func runServer(scale string) {
	sc, _ := strconv.ParseFloat(scale, 64)
	sb, err := sandbox.New(sandbox.Options{Seed: 42, Scale: sc, Key: key, Admin: true, Now: time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Printf("%s %d %d\n", ln.Addr(), minimumRequests(sb, false), minimumRequests(sb, true))
	mux := http.NewServeMux()
	mux.Handle("/", sb)
	mux.Handle("/__bench/ledger", serveLedgerTruth(sb))
	http.Serve(ln, mux)
}

// minimumRequests is the fewest requests that can read everything a first sync reads, at the
// largest page sizes the simulator applies (100; 50 for webhook history): one page chain per list
// and per product type, one per customer's credit history, one per detail read.
func minimumRequests(sb *sandbox.Server, details bool) int {
	pages := func(n, size int) int { return max(1, (n+size-1)/size) }
	n := 0
	for _, d := range entity.All() { // every paged list of one path; products (by type) below
		if d.Paging == entity.Pages && len(d.Paths) == 1 {
			n += pages(len(sb.Dump(d.TableName())), 100)
		}
	}
	byType := map[string]int{}
	live := 0
	for _, raw := range sb.Dump("products") {
		var p struct{ Type, Status string }
		json.Unmarshal(raw, &p)
		if p.Status != "deleted" {
			byType[p.Type]++
			live++
		}
	}
	products, _ := entity.Get(entity.Products)
	n += len(products.Paths) // every type is asked for at least once
	for _, c := range byType {
		n += pages(c, 100) - 1
	}
	n += pages(len(sb.Dump("webhook_deliveries")), 50)
	perCustomer := map[string]int{}
	for _, raw := range sb.Dump("credit_ledger") {
		var l struct {
			CustomerID string `json:"customerId"`
		}
		json.Unmarshal(raw, &l)
		perCustomer[l.CustomerID]++
	}
	for _, raw := range sb.Dump("customers") {
		var c struct{ ID string }
		json.Unmarshal(raw, &c)
		n += pages(perCustomer[c.ID], 100)
	}
	if details {
		n += live + len(sb.Dump("payment_requests"))
	}
	return n
}

func benchScale(scale string, rate float64, details bool, conc int) error {
	cmd := exec.Command(os.Args[0], "-serve", scale)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		return fmt.Errorf("simulator at scale %s: %w", scale, err)
	}
	var addr string
	var minPlain, minDetails int
	fmt.Sscan(line, &addr, &minPlain, &minDetails)
	minimum := minPlain
	if details {
		minimum = minDetails
	}

	dir, err := os.MkdirTemp("", "syncbench")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	c, err := api.New(api.Config{BaseURL: "http://" + addr, APIKey: key, RatePerMin: rate, Unlimited: rate == 0})
	if err != nil {
		return err
	}
	var fl floorResult
	if floor {
		if fl, err = runFloor(context.Background(), c, dir, 100, conc); err != nil {
			return fmt.Errorf("floor: %w", err)
		}
	}
	if lakeBench {
		cfg := config.Defaults[config.Lake]()
		cfg.Root, cfg.Catalog = "file://"+filepath.Join(dir, "lake"), "sqlite://"+filepath.Join(dir, "catalog.db")
		if benchLake, err = lake.Open(context.Background(), cfg, nil); err != nil {
			return err
		}
		defer benchLake.Close()
	}
	startProfile()
	periods := newCreditPeriods(creditRefresh, advance)
	best := newCeiling(creditRefresh, advance)
	for run := 1; run <= runs; run++ {
		if run > 1 {
			if err := advanceClock("http://"+addr, advance); err != nil {
				return err
			}
			minimum = 0 // what a later run must read depends on what changed
		}
		s, cpu, cs, err := benchRun(scale, run, c, cmd.Process.Pid, "http://"+addr, filepath.Join(dir, "bench.duckdb"), minimum, details, conc, best)
		if err != nil {
			return err
		}
		if line := periods.add(run, cs); line != "" && !listsOnly {
			fmt.Printf("         %s\n", line)
		}
		if floor && run == 1 {
			printFloor(fl, s, cpu)
		}
	}
	if line := periods.total(); line != "" && !listsOnly && runs > periods.runsPer+1 {
		fmt.Printf("         %s\n", line)
	}
	if line := best.line(); line != "" && !listsOnly {
		fmt.Printf("         %s\n", line)
	}
	if keep != "" {
		return os.Rename(filepath.Join(dir, "bench.duckdb"), keep)
	}
	return nil
}

// advanceClock moves the simulator's clock, so the next run finds paid invoices, new ledger
// rows, webhook deliveries and renamed or deleted records.
func advanceClock(base string, d time.Duration) error {
	resp, err := http.Post(fmt.Sprintf("%s/__sandbox/advance?minutes=%d", base, int(d.Minutes())), "application/json", nil)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("advance the simulator's clock: %s", resp.Status)
	}
	return nil
}

// benchRun syncs once into path and prints one line of figures.
func benchRun(scale string, run int, c *api.Client, simPid int, base, path string, minimum int, details bool, conc int, best *ceiling) (fetch.Summary, float64, creditStats, error) {
	trace := &memTrace{start: time.Now()}
	settings := config.Defaults[config.Fetch]()
	settings.Concurrency, settings.Details, settings.CreditRefresh = conc, details, creditRefresh
	settings.MaxClockSkew = fetch.TrustServiceClock // the simulator runs a simulated clock
	opts := syncrun.Options{Options: fetch.Options{Fetch: settings, Account: "bench", Log: benchLog},
		Build: config.Build{MemoryLimit: memoryLimit}, KeepMemory: keepMemory, RowGroupSize: rowGroupSize, MemoryTrace: trace.sample}
	if listsOnly {
		opts.MaxRequests = 1 // lists always complete; the fan-outs get nothing
	}
	if run > 1 {
		scale = fmt.Sprintf("%s#%d", scale, run)
	}
	start := time.Now()
	trace.start = start
	stopSampling := sampleRSS(start)
	selfCPU, simCPU, written, gcCPU := cpuSeconds(os.Getpid()), cpuSeconds(simPid), writtenMB(), goGCSeconds()
	sums, err := syncrun.Run(context.Background(), path, []syncrun.Account{{Name: "bench", Client: c}}, opts)
	if err != nil {
		return fetch.Summary{}, 0, creditStats{}, err
	}
	wall := time.Since(start)
	selfCPU, simCPU, gcCPU = cpuSeconds(os.Getpid())-selfCPU, cpuSeconds(simPid)-simCPU, goGCSeconds()-gcCPU
	lastRunWritten = writtenMB() - written
	peakAt, peakMB := stopSampling()
	s := sums[0]
	if benchLake != nil {
		// The commit the syncer makes after the publish (syncrun.Run with Options.Lake), made
		// here after the run so its CPU is its own: nothing else runs in this process then.
		cpu0 := cpuSeconds(os.Getpid())
		res, err := benchLake.Commit(context.Background(), path, []string{"bench"})
		if err != nil {
			return s, 0, creditStats{}, fmt.Errorf("lake commit: %w", err)
		}
		printLake(res, cpuSeconds(os.Getpid())-cpu0, wall, selfCPU, path)
	}
	fmt.Fprintf(os.Stderr, "  RSS peaked at %d MB %.1fs into the run (lists phase ended at %.1fs)\n",
		peakMB, peakAt.Seconds(), s.ListsTook.Seconds())
	if p, ok := trace.peak(); ok {
		fmt.Fprintf(os.Stderr, "  at the sampled peak (%.1fs): %s\n", p.at.Seconds(), p.describe())
	}
	if memTraceOut != "" {
		f, err := os.OpenFile(memTraceOut, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
		if err != nil {
			return fetch.Summary{}, 0, creditStats{}, err
		}
		trace.write(f, "scale "+scale)
		f.Close()
	}
	// Both processes share the machine's cores; the syncer's own CPU time says what it would
	// reach with the cores to itself, as against a remote service.
	fmt.Fprintf(os.Stderr, "  CPU: syncer %.1f s (Go's GC about %.1f), simulator %.1f s, %.0f records per syncer CPU-second\n",
		selfCPU, gcCPU, simCPU, float64(s.Records)/selfCPU)
	fanReq := s.Requests - s.ListRequests
	fanTook := s.CreditTook + s.DetailsTook
	minText, ratio := "-", "-" // a later run's minimum depends on what changed
	if minimum > 0 {
		minText, ratio = strconv.Itoa(minimum), fmt.Sprintf("%.3f", float64(s.Requests)/float64(minimum))
	}
	fmt.Printf("%-6s %9d %8d %8s %6s %9s %11.0f %9s | %9d %8s %11.0f | %8d %8s %9.0f\n", scale, s.Records, s.Requests, minText,
		ratio, wall.Round(10*time.Millisecond),
		float64(s.Records)/wall.Seconds(), peakRSS(),
		s.ListRecords, s.ListsTook.Round(10*time.Millisecond), float64(s.ListRecords)/s.ListsTook.Seconds(),
		fanReq, fanTook.Round(10*time.Millisecond), float64(fanReq)/fanTook.Seconds())
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	fmt.Fprintf(os.Stderr, "  go runtime: %d MB obtained from the OS, heap in use now %d MB\n", ms.Sys>>20, ms.HeapInuse>>20)
	if listsOnly {
		return s, selfCPU, creditStats{}, nil
	}
	cs, err := measureCredit(context.Background(), base, path, s.RunID, s.CreditReads, best)
	if err != nil {
		return s, selfCPU, cs, fmt.Errorf("measure credit: %w", err)
	}
	fmt.Printf("         %s\n", cs)
	return s, selfCPU, cs, nil
}

// goGCSeconds is the CPU time Go's garbage collector has used so far (the runtime's estimate).
func goGCSeconds() float64 {
	m := []metrics.Sample{{Name: "/cpu/classes/gc/total:cpu-seconds"}}
	metrics.Read(m)
	return m[0].Value.Float64()
}

// cpuSeconds reads the user and system CPU time a process has used so far.
func cpuSeconds(pid int) float64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// the fields after the parenthesised command name; utime and stime are the 12th and 13th
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	if len(f) < 13 {
		return 0
	}
	ut, _ := strconv.ParseFloat(f[11], 64)
	st, _ := strconv.ParseFloat(f[12], 64)
	return (ut + st) / 100 // clock ticks; USER_HZ is 100 on Linux
}

// peakRSS reads this process's high-water resident set size.
func peakRSS() string {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return "?"
	}
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "VmHWM:") {
			kb, _ := strconv.Atoi(strings.Fields(l)[1])
			return fmt.Sprintf("%d MB", kb/1024)
		}
	}
	return "?"
}

// sampleRSS records the resident set's peak and when it happened, to tell which phase drives it.
func sampleRSS(start time.Time) func() (time.Duration, int) {
	done := make(chan struct{})
	var at time.Duration
	peak := 0
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(50 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				if mb := currentRSS(); mb > peak {
					peak, at = mb, time.Since(start)
				}
			}
		}
	}()
	return func() (time.Duration, int) { close(done); <-finished; return at, peak }
}

func currentRSS() int {
	b, _ := os.ReadFile("/proc/self/status")
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "VmRSS:") {
			kb, _ := strconv.Atoi(strings.Fields(l)[1])
			return kb / 1024
		}
	}
	return 0
}

// printLake says what the run's lake commit took, its share of the run's wall time, and the
// lake's size on disk (every snapshot's files and metadata) against the DuckDB file's.
func printLake(r lake.Result, cpu float64, wall time.Duration, syncCPU float64, path string) {
	snaps, retries := r.Snapshots()
	var rows int64
	for _, t := range r.Tables {
		if t.Committed {
			rows += t.Rows
		}
	}
	var files int
	var bytes int64
	filepath.WalkDir(filepath.Join(filepath.Dir(path), "lake"), func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			files++
			if fi, err := d.Info(); err == nil {
				bytes += fi.Size()
			}
		}
		return nil
	})
	var duck int64
	if fi, err := os.Stat(path); err == nil {
		duck = fi.Size()
	}
	fmt.Printf("         lake: commit %s wall (+%.1f%% on the sync's %s), %.2f CPU-s (+%.1f%% on the sync's %.1f); %d snapshots (%d rows), %d retries; lake %d files, %.1f MB, %.2fx the DuckDB file's %.1f MB\n",
		r.Took.Round(10*time.Millisecond), 100*r.Took.Seconds()/wall.Seconds(), wall.Round(10*time.Millisecond),
		cpu, 100*cpu/syncCPU, syncCPU, snaps, rows, retries,
		files, float64(bytes)/1e6, float64(bytes)/float64(max(duck, 1)), float64(duck)/1e6)
}
