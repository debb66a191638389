package main

import (
	"fmt"
	"io"
	"os"
	"runtime/metrics"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/billsync/billsync/internal/duckfile"
	"github.com/billsync/billsync/internal/warehouse"
)

// memPoint is where the process's memory is at one moment: the kernel's count (RSS, of which
// anonymous and file-backed pages), Go's (what its heap holds, what it has mapped and not given
// back, the next GC's goal) and DuckDB's own (tracked by its buffer manager, by tag; spilled).
// What RssAnon holds beyond Go's and DuckDB's tracked figures is C memory DuckDB does not track
// or its allocator keeps.
type memPoint struct {
	at                       time.Duration
	rss, rssAnon, rssFile    int64
	goHeap, goMapped, goGoal int64
	goFree, goStacks         int64 // heap pages free but not handed back; goroutine stacks
	je                       duckfile.AllocatorStats
	mallocUsed, mallocFree   int64 // glibc malloc: in use, free in its arenas
	threads                  int64
	duckTracked, duckSpilled int64
	duckTags                 map[string]int64
}

func (p memPoint) untracked() int64 { return p.rssAnon - p.goMapped - p.duckTracked }

// memTrace collects points from the build's DuckDB sampler; each point adds the process and Go
// figures of the same moment.
type memTrace struct {
	start  time.Time
	mu     sync.Mutex
	points []memPoint
	maxRSS int64
}

var goMetrics = []metrics.Sample{
	{Name: "/memory/classes/heap/objects:bytes"},
	{Name: "/memory/classes/total:bytes"},
	{Name: "/memory/classes/heap/released:bytes"},
	{Name: "/gc/heap/goal:bytes"},
	{Name: "/memory/classes/heap/free:bytes"},
	{Name: "/memory/classes/heap/stacks:bytes"},
}

func (t *memTrace) sample(s warehouse.MemorySample) {
	p := memPoint{at: s.At.Sub(t.start), duckTracked: s.Tracked, duckSpilled: s.Spilled, duckTags: s.Tags}
	p.rss, p.rssAnon, p.rssFile = procStatus("VmRSS:"), procStatus("RssAnon:"), procStatus("RssFile:")
	ms := slices.Clone(goMetrics)
	metrics.Read(ms)
	p.goHeap = int64(ms[0].Value.Uint64())
	p.goMapped = int64(ms[1].Value.Uint64() - ms[2].Value.Uint64()) // released pages are not resident
	p.goGoal = int64(ms[3].Value.Uint64())
	p.goFree, p.goStacks = int64(ms[4].Value.Uint64()), int64(ms[5].Value.Uint64())
	p.je, _ = duckfile.ReadAllocatorStats()
	p.mallocUsed, p.mallocFree = cMalloc()
	p.threads = procStatus("Threads:") >> 10
	t.mu.Lock()
	defer t.mu.Unlock()
	if heapProfileOut != "" && (len(t.points) == 0 || p.rss > t.maxRSS) {
		writeHeapProfile(heapProfileOut)
	}
	t.maxRSS = max(t.maxRSS, p.rss)
	t.points = append(t.points, p)
}

// writeHeapProfile writes Go's heap profile (as of the last GC) to path, replacing it.
func writeHeapProfile(path string) {
	f, err := os.Create(path)
	if err != nil {
		return
	}
	defer f.Close()
	pprof.Lookup("heap").WriteTo(f, 0)
}

// procStatus reads one field of /proc/self/status, in bytes.
func procStatus(field string) int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, field) {
			kb, _ := strconv.ParseInt(strings.Fields(l)[1], 10, 64)
			return kb << 10
		}
	}
	return 0
}

func mb(n int64) int64 { return n >> 20 }

// peak is the point of highest RSS.
func (t *memTrace) peak() (memPoint, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.points) == 0 {
		return memPoint{}, false
	}
	best := t.points[0]
	for _, p := range t.points {
		if p.rss > best.rss {
			best = p
		}
	}
	return best, true
}

// describe says where a point's memory is, in MB.
func (p memPoint) describe() string {
	var tags []string
	for tag, n := range p.duckTags {
		if n >= 1<<20 {
			tags = append(tags, fmt.Sprintf("%s %d", tag, mb(n)))
		}
	}
	slices.Sort(tags)
	return fmt.Sprintf("RSS %d MB (anon %d, file %d) = Go %d mapped (heap %d, free %d, stacks %d, goal %d) + DuckDB tracked %d [%s] + untracked C %d; spilled %d; "+
		"jemalloc allocated %d, active %d, resident %d, mapped %d, retained %d, %d arenas; malloc in use %d, free %d; %d threads",
		mb(p.rss), mb(p.rssAnon), mb(p.rssFile), mb(p.goMapped), mb(p.goHeap), mb(p.goFree), mb(p.goStacks), mb(p.goGoal), mb(p.duckTracked),
		strings.Join(tags, ", "), mb(p.untracked()), mb(p.duckSpilled),
		mb(p.je.Allocated), mb(p.je.Active), mb(p.je.Resident), mb(p.je.Mapped), mb(p.je.Retained), p.je.Arenas,
		mb(p.mallocUsed), mb(p.mallocFree), p.threads)
}

// write prints the series as tab-separated MB figures, one line per sample.
func (t *memTrace) write(w io.Writer, label string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	tagSet := map[string]bool{}
	for _, p := range t.points {
		for tag := range p.duckTags {
			tagSet[tag] = true
		}
	}
	var tags []string
	for tag := range tagSet {
		tags = append(tags, tag)
	}
	slices.Sort(tags)
	fmt.Fprintf(w, "# %s\nseconds\trss\trss_anon\trss_file\tgo_mapped\tgo_heap\tgo_goal\tduck_tracked\tuntracked_c\tduck_spilled\tje_allocated\tje_active\tje_resident\tmalloc_used\tmalloc_free\t%s\n",
		label, strings.Join(tags, "\t"))
	for _, p := range t.points {
		fmt.Fprintf(w, "%.2f\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d", p.at.Seconds(), mb(p.rss), mb(p.rssAnon), mb(p.rssFile),
			mb(p.goMapped), mb(p.goHeap), mb(p.goGoal), mb(p.duckTracked), mb(p.untracked()), mb(p.duckSpilled))
		fmt.Fprintf(w, "\t%d\t%d\t%d\t%d\t%d", mb(p.je.Allocated), mb(p.je.Active), mb(p.je.Resident), mb(p.mallocUsed), mb(p.mallocFree))
		for _, tag := range tags {
			fmt.Fprintf(w, "\t%d", mb(p.duckTags[tag]))
		}
		fmt.Fprintln(w)
	}
}
