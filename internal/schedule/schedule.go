// Package schedule runs a job on a cron schedule: specs are validated at start-up, runs never
// overlap, and a stop signal lets the running job finish within a grace period before cancelling it.
package schedule

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
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
	Job      Job
	Grace    time.Duration // how long a running job may take to finish after a stop; 0 = cancel at once
	Log      *slog.Logger
	Now      func() time.Time // for tests; time.Now by default
	// Announce, if set, is told the next run's time (in the schedule's zone) at start and after
	// each run, beside the log's "next run at" record: the syncer prints it on a terminal.
	Announce func(next time.Time)
}

// announce says when the next run is, in the schedule's zone.
func (r *Runner) announce(log *slog.Logger, next time.Time) {
	log.Info("next run at", "at", next.Format(time.RFC3339), "in", time.Until(next).Round(time.Second))
	if r.Announce != nil {
		r.Announce(next)
	}
}

// Run blocks until ctx is done. A tick that arrives while the previous run is still going is
// skipped and logged (a nightly sync that overruns must not stack up). On stop, the running job
// gets Grace to finish, then its context is cancelled; Run returns after it has returned.
func (r *Runner) Run(ctx context.Context) error {
	now := r.Now
	if now == nil {
		now = time.Now
	}
	log := r.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	jobCtx, cancelJob := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelJob()

	var wg sync.WaitGroup
	var mu sync.Mutex
	running := false
	first := true
	for {
		next := r.Schedule.Next(now())
		if first {
			r.announce(log, next)
			first = false
		}
		timer := time.NewTimer(time.Until(next))
		select {
		case <-ctx.Done():
			timer.Stop()
			return r.drain(&wg, cancelJob, log, &mu, &running)
		case <-timer.C:
		}
		if ctx.Err() != nil {
			// A tick and a stop arrived together; select picks either, but a stop wins.
			return r.drain(&wg, cancelJob, log, &mu, &running)
		}
		mu.Lock()
		if running {
			mu.Unlock()
			log.Warn("previous run still going; skipping this tick", "tick", next.Format(time.RFC3339))
			continue
		}
		running = true
		mu.Unlock()
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := r.Job(jobCtx)
			switch {
			case err == nil:
			case jobCtx.Err() != nil: // the stop's doing, whatever the job made of it
				log.Info("scheduled run cancelled")
			default:
				log.Error("scheduled run failed", "err", err)
			}
			mu.Lock()
			running = false
			mu.Unlock()
			if ctx.Err() == nil {
				r.announce(log, r.Schedule.Next(now()))
			}
		}()
	}
}

// drain waits for a running job, Grace at most, then cancels it and waits for it to return.
func (r *Runner) drain(wg *sync.WaitGroup, cancel context.CancelFunc, log *slog.Logger, mu *sync.Mutex, running *bool) error {
	mu.Lock()
	busy := *running
	mu.Unlock()
	if busy {
		log.Info("stopping", "running_sync_grace", r.Grace)
	} else {
		log.Info("stopping")
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(r.Grace):
		log.Info("stopping: grace over, cancelling the running sync", "grace", r.Grace)
		cancel()
		<-done
	}
	log.Info("stopped")
	return nil
}
