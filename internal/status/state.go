package status

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
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
			s.Attempts[k] = v
		}
	})
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
