package status

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"
)

// StateName is the syncer's state file beside the warehouse: what the syncer is doing and how its
// latest attempts ended, including the failed ones a published warehouse never shows (a failed
// run publishes nothing).
const StateName = "billsync-syncer.json"

// StatePath is the state file of the warehouse at db.
func StatePath(db string) string { return filepath.Join(filepath.Dir(db), StateName) }

// State is what the syncer writes for syncer status. It holds no secret: errors are the run's,
// which never contain the key.
type State struct {
	PID       int       `json:"pid"`
	Mode      string    `json:"mode"` // daemon or once
	StartedAt time.Time `json:"started_at"`
	// Schedule is the daemon's cron spec and zone; NextRun its next tick (zero when none: -once).
	Schedule string    `json:"schedule,omitempty"`
	TZ       string    `json:"tz,omitempty"`
	NextRun  time.Time `json:"next_run,omitzero"`
	// RunningSince is when the sync under way started; zero when none runs.
	RunningSince time.Time `json:"running_since,omitzero"`
	// StoppedAt is when the process stopped (a daemon's stop, or the end of -once); zero while it runs.
	StoppedAt time.Time `json:"stopped_at,omitzero"`
	// Attempts are each account's latest sync attempt, by account name.
	Attempts map[string]Attempt `json:"attempts,omitempty"`
}

// Attempt is how an account's latest sync attempt ended.
type Attempt struct {
	RunID      int64     `json:"run_id,omitempty"`
	Status     string    `json:"status"` // succeeded, partial, failed, cancelled
	StartedAt  time.Time `json:"started_at"`
	FinishedAt time.Time `json:"finished_at"`
	Records    int64     `json:"records"`
	Error      string    `json:"error,omitempty"`
	// Lake is how the run's lake commit ended (internal/lake): "committed ..." or "failed: ...";
	// empty without a lake.
	Lake string `json:"lake,omitempty"`
	// LakeBehind counts the published runs in a row the lake did not take (0: it holds the
	// published file); LakeError is the latest commit's failure, LakeBehindSince the first
	// published run it missed. Kept across failed syncs and restarts until a commit lands.
	LakeBehind      int       `json:"lake_behind_runs,omitempty"`
	LakeError       string    `json:"lake_error,omitempty"`
	LakeBehindSince time.Time `json:"lake_behind_since,omitzero"`
}

// published says whether the attempt published the warehouse (only those commit to the lake).
func (a Attempt) published() bool { return a.Status == "succeeded" || a.Status == "partial" }

// lakeProgress carries the lake's backlog from the account's previous attempt to next: a
// published run whose commit failed adds one, a commit that landed (or a lake no longer
// configured) clears it, and a run that published nothing leaves it as it was.
func lakeProgress(prev, next Attempt) Attempt {
	switch {
	case !next.published():
		next.LakeBehind, next.LakeError, next.LakeBehindSince = prev.LakeBehind, prev.LakeError, prev.LakeBehindSince
	case strings.HasPrefix(next.Lake, "failed"):
		next.LakeBehind, next.LakeError, next.LakeBehindSince = prev.LakeBehind+1, strings.TrimPrefix(next.Lake, "failed: "), prev.LakeBehindSince
		if next.LakeBehindSince.IsZero() {
			next.LakeBehindSince = next.FinishedAt
		}
	default:
		next.LakeBehind, next.LakeError, next.LakeBehindSince = 0, "", time.Time{}
	}
	return next
}

// LakeBehindNote is, in words, which accounts' lake is behind their published runs and why;
// "" when none is. It is the operators' lake alert.
func LakeBehindNote(attempts map[string]Attempt) string {
	var names []string
	for n, a := range attempts {
		if a.LakeBehind > 0 {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	var out []string
	for _, n := range names {
		a := attempts[n]
		out = append(out, fmt.Sprintf("Account %s: the lake is behind the published warehouse by %s (since %s): %s. The next run commits what is missing (docs/lake.md).",
			n, runs(a.LakeBehind), a.LakeBehindSince.UTC().Format("2006-01-02 15:04 UTC"), a.LakeError))
	}
	return strings.Join(out, "\n")
}

func runs(n int) string {
	if n == 1 {
		return "1 run"
	}
	return fmt.Sprintf("%d runs", n)
}

// WriteState replaces the state file at path whole (a temporary file renamed into place), so a
// reader never sees half of it.
func WriteState(path string, s *State) error {
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".billsync-syncer-*.json")
	if err != nil {
		return fmt.Errorf("syncer state: %w", err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(append(b, '\n')); err != nil {
		tmp.Close()
		return fmt.Errorf("syncer state: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("syncer state: %w", err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("syncer state: %w", err)
	}
	return nil
}

// ReadState reads the state file at path; a missing file is (nil, nil): no syncer ran here yet.
func ReadState(path string) (*State, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("syncer state: %w", err)
	}
	var s State
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("syncer state %s: %w", path, err)
	}
	return &s, nil
}

// Recorder keeps the state file of a running syncer. A state file that cannot be written costs
// only syncer status its view of this process: it is logged, never fails a sync.
type Recorder struct {
	mu   sync.Mutex
	path string
	s    State
	log  *slog.Logger
}

// NewRecorder starts the state of this process at path, keeping the latest attempts an earlier
// process recorded (a failure before a restart is still the latest).
func NewRecorder(path, mode, schedule, tz string, log *slog.Logger) *Recorder {
	r := &Recorder{path: path, log: log}
	prev, err := ReadState(path)
	if err != nil {
		log.Warn("syncer state unreadable: it is started afresh", "path", path, "err", err)
	}
	r.s = State{PID: os.Getpid(), Mode: mode, StartedAt: time.Now(), Schedule: schedule, TZ: tz, Attempts: map[string]Attempt{}}
	if prev != nil {
		for k, v := range prev.Attempts {
			r.s.Attempts[k] = v
		}
	}
	r.writeLocked()
	return r
}

// Next records the schedule's next tick.
func (r *Recorder) Next(t time.Time) { r.update(func(s *State) { s.NextRun = t }) }

// RunStarted records a sync under way.
func (r *Recorder) RunStarted(t time.Time) { r.update(func(s *State) { s.RunningSince = t }) }

// RunFinished records how the sync ended for each account it tried.
func (r *Recorder) RunFinished(attempts map[string]Attempt) {
	r.update(func(s *State) {
		s.RunningSince = time.Time{}
		for k, v := range attempts {
			s.Attempts[k] = lakeProgress(s.Attempts[k], v)
		}
	})
}

// LakeBehind is LakeBehindNote of the attempts recorded.
func (r *Recorder) LakeBehind() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return LakeBehindNote(r.s.Attempts)
}

// Stopped records the end of the process.
func (r *Recorder) Stopped() {
	r.update(func(s *State) { s.StoppedAt, s.RunningSince, s.NextRun = time.Now(), time.Time{}, time.Time{} })
}

func (r *Recorder) update(f func(*State)) {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	f(&r.s)
	r.writeLocked()
}

func (r *Recorder) writeLocked() {
	if err := WriteState(r.path, &r.s); err != nil {
		r.log.Warn("syncer state not written: syncer status may show an older state", "path", r.path, "err", err)
	}
}
