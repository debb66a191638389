// Package schedule runs a job on a cron schedule with robfig/cron: specs are validated at start-up,
// runs never overlap (cron's SkipIfStillRunning, also over the runs asked for at start or on
// request), and a stop lets the running job finish within a grace period before cancelling it.
// What is ours: the validation, the logs, the runs asked for and the grace.
package schedule

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/robfig/cron/v3"
)

// Parse validates a standard five-field cron spec (or a descriptor such as @daily) in loc.
// robfig/cron panics on some malformed CRON_TZ= prefixes; that panic becomes an error here.
func Parse(spec string, loc *time.Location) (s cron.Schedule, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("cron spec %q: %v", spec, r)
		}
	}()
	if strings.HasPrefix(spec, "CRON_TZ=") || strings.HasPrefix(spec, "TZ=") {
		return nil, fmt.Errorf("cron spec %q: set the time zone with BILLSYNC_TZ, not a TZ= prefix", spec)
	}
	p := cron.NewParser(cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow | cron.Descriptor)
	s, err = p.Parse(spec)
	if err != nil {
		return nil, fmt.Errorf("cron spec %q: %w", spec, err)
	}
	if loc != nil {
		s = inLocation{s, loc}
	}
	return s, nil
}

// inLocation evaluates a schedule in a fixed time zone whatever the process's local zone is.
type inLocation struct {
	cron.Schedule
	loc *time.Location
}

func (s inLocation) Next(t time.Time) time.Time { return s.Schedule.Next(t.In(s.loc)) }

// Job is one scheduled run. It must return when ctx is cancelled.
type Job func(ctx context.Context) error

// Runner fires Job on Schedule until Run's context ends.
type Runner struct {
	Schedule cron.Schedule
	Location *time.Location // the schedule's zone (cron.WithLocation); nil = the process's
	Job      Job
	Grace    time.Duration // how long a running job may take to finish after a stop; 0 = cancel at once
	Log      *slog.Logger
	// Announce, if set, is told the next run's time (in the schedule's zone) at start and after
	// each run, beside the log's "next run at" record: the syncer prints it on a terminal.
	Announce func(next time.Time)
	// Start runs the job once at start, before the first tick (the syncer does when nothing is
	// published yet: a new install has nothing to serve until then).
	Start bool
	// Now asks for one run now (the syncer's SIGUSR1); one asked for while a run is going is
	// served by that run, never beside it.
	Now <-chan struct{}
}

// announce says when the next run is, in the schedule's zone.
func (r *Runner) announce(log *slog.Logger, next time.Time) {
	log.Info("next run at", "at", next, "in", time.Until(next).Round(time.Second))
	if r.Announce != nil {
		r.Announce(next)
	}
}

// Run blocks until ctx is done. A tick that arrives while the previous run is still going is
// skipped and logged (a nightly sync that overruns must not stack up). On stop, the running job
// gets Grace to finish, then its context is cancelled; Run returns after it has returned.
func (r *Runner) Run(ctx context.Context) error {
	log := r.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	loc := r.Location
	if loc == nil {
		loc = time.Local
	}
	// The job's context ends only when the grace is over, not with ctx.
	jobCtx, cancelJob := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelJob()
	cl := &cronLog{log: log}
	c := cron.New(cron.WithLocation(loc), cron.WithLogger(cl))
	var running atomic.Bool
	// One job for the ticks and the runs asked for: cron's SkipIfStillRunning guards both, so
	// no two runs overlap whatever starts them.
	job := cron.NewChain(cron.SkipIfStillRunning(cl)).Then(cron.FuncJob(func() {
		// Marked running before the stop is checked: a stop that reads "not running" then finds no
		// job that started after it looked.
		running.Store(true)
		defer running.Store(false)
		if ctx.Err() != nil {
			return // a tick and a stop arrived together: the stop wins
		}
		err := r.Job(jobCtx)
		switch {
		case err == nil:
		case jobCtx.Err() != nil: // the stop's doing, whatever the job made of it
			log.Info("scheduled run cancelled")
		default:
			log.Error("scheduled run failed", "err", err)
		}
		if ctx.Err() == nil {
			r.announce(log, r.Schedule.Next(time.Now().In(loc)))
		}
	}))
	c.Schedule(r.Schedule, job)
	var asked sync.WaitGroup // runs started here, not by cron: the stop waits for them too
	runNow := func(why string) {
		if running.Load() {
			log.Info("a run is going; it serves the request for one now", "why", why)
			return
		}
		log.Info("run now", "why", why)
		asked.Add(1)
		go func() {
			defer asked.Done()
			job.Run()
		}()
	}
	c.Start()
	if r.Start {
		runNow("start")
	}
	r.announce(log, r.Schedule.Next(time.Now().In(loc)))
wait:
	for {
		select {
		case <-ctx.Done():
			break wait
		case <-r.Now:
			if ctx.Err() == nil {
				runNow("asked")
			}
		}
	}

	busy := running.Load()
	if busy {
		log.Info("stopping", "running_sync_grace", r.Grace)
	} else {
		log.Info("stopping")
	}
	// Stop ends the ticks; its context ends when the running job cron started has returned.
	stopped := c.Stop()
	done := make(chan struct{})
	go func() {
		<-stopped.Done()
		asked.Wait()
		close(done)
	}()
	if busy {
		grace := time.NewTimer(r.Grace)
		defer grace.Stop()
		select {
		case <-done:
		case <-grace.C:
			log.Info("stopping: grace over, cancelling the running sync", "grace", r.Grace)
			cancelJob()
		}
	}
	<-done
	log.Info("stopped")
	return nil
}

// cronLog is robfig/cron's logger on slog. Its skip notice becomes our warning, naming the skipped
// tick (the time of cron's last wake-up); its routine records (start, wake, run, stop) go to Debug.
type cronLog struct {
	log *slog.Logger

	mu   sync.Mutex
	wake time.Time
}

func (l *cronLog) Info(msg string, kv ...any) {
	switch msg {
	case "skip":
		l.mu.Lock()
		tick := l.wake
		l.mu.Unlock()
		l.log.Warn("previous run still going; skipping this tick", "tick", tick)
		return
	case "wake":
		if len(kv) == 2 {
			if t, ok := kv[1].(time.Time); ok {
				l.mu.Lock()
				l.wake = t
				l.mu.Unlock()
			}
		}
	}
	l.log.Debug("cron "+msg, kv...)
}

func (l *cronLog) Error(err error, msg string, kv ...any) {
	l.log.Error("cron "+msg, append(kv, "err", err)...)
}
