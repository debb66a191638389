package delivery

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/billsync/billsync/internal/jobs/journalfile"
	"github.com/billsync/billsync/internal/report"
	"github.com/robfig/cron/v3"
)

// Scheduler runs a schedule file's deliveries beside the syncer daemon's syncs. It never
// blocks a sync: it runs in its own goroutine, and a sync only tells it how it ended.
//
// Which occurrences are due is worked out from the journal, not remembered: at start, on
// each delivery's cron tick (robfig/cron, in BILLSYNC_TZ) and every Poll, every occurrence
// whose time lies within its delivery's late_window and that the journal does not have sent
// is delivered. A restart, a second daemon (the journal's lock), a clock change or a
// catch-up after downtime therefore neither sends one twice nor drops one: one missed while
// the daemon was down goes out late and marked late; one older than the window is reported
// (log and alert), not sent.
type Scheduler struct {
	File    *File
	Options Options
	Alerts  *Alerter      // nil: no alert e-mails (the log still says it)
	Poll    time.Duration // default a minute
	// LateAfter: an occurrence sent more than this after its time is marked late, unless the
	// delay was the wait for a fresh sync. Default 10 minutes.
	LateAfter time.Duration
	// NoSyncAlert: the operators are alerted when no sync succeeded for this long (counted from
	// the daemon's start until it saw one); 0 = never.
	NoSyncAlert time.Duration
	// DQMin: the operators are alerted while the data-quality report lists at least this many
	// exceptions (dqSheets); 0 = never.
	DQMin int
	// Observer hears of the deliveries sent and failed (metrics); the Alerter's hears of the
	// alert states. nil: none.
	Observer Observer
	Log      *slog.Logger

	mu        sync.Mutex
	failedAt  time.Time // the last sync's failure; zero after a success
	failedErr string
	lastOK    time.Time // the last successful sync this daemon saw; zero: none yet
	partial   string    // accounts the last published sync left incomplete
	clockNote string    // how the service's clock disagreed with this machine's in the last published sync
	lakeNote  string    // which accounts' lake is behind their published runs, and why ("": none)
	synced    bool      // a sync ended since the start
	started   time.Time
	waited    map[occKey]bool      // occurrences that waited for a fresh sync
	okLoaded  bool                 // lastOK was read from the warehouse
	dqStamp   string               // the warehouse and date the data-quality count is of
	retryAt   map[occKey]time.Time // failed occurrences: not before
	failures  map[occKey]int
	nudge     chan struct{}
	// firstStart is when a scheduler first started against the journal (zero: not read yet):
	// occurrences before it are owed to nobody.
	firstStart time.Time
	toldWait   bool // the wait for the first sync was logged
}

type occKey struct{ name, asOf string }

func (s *Scheduler) init() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.nudge == nil {
		s.nudge = make(chan struct{}, 1)
		s.waited = map[occKey]bool{}
		s.retryAt = map[occKey]time.Time{}
		s.failures = map[occKey]int{}
	}
	if s.Poll == 0 {
		s.Poll = time.Minute
	}
	if s.LateAfter == 0 {
		s.LateAfter = 10 * time.Minute
	}
	if s.Log == nil {
		s.Log = slog.New(slog.DiscardHandler)
	}
	if s.started.IsZero() {
		s.started = s.Options.now()
	}
}

// SyncFinished tells the scheduler how a sync ended (err nil: published; partial names the
// accounts published incomplete, "" for none): a failure makes the deliveries that follow
// stale until a sync succeeds; either way waiting occurrences are looked at again at once.
func (s *Scheduler) SyncFinished(err error, partial string, at time.Time) {
	s.init()
	s.mu.Lock()
	clear(s.retryAt) // a new sync is a reason to try the failed ones again
	if err != nil {
		s.failedAt, s.failedErr = at, oneLine(err.Error())
	} else {
		s.failedAt, s.failedErr, s.lastOK = time.Time{}, "", at
	}
	if err == nil {
		s.partial = partial
	}
	s.synced = true
	s.mu.Unlock()
	// The alerts are the scheduler's goroutine's to send (Check): a slow mail server must not
	// hold the sync that reports here.
	s.poke()
}

// SyncClock tells the scheduler, before SyncFinished of a published sync, how the service's clock
// disagreed with this machine's in it (both clocks and the offset, in words; "" when they
// agreed): the operators are told when that starts and when it ends.
func (s *Scheduler) SyncClock(note string) {
	s.init()
	s.mu.Lock()
	s.clockNote = note
	s.mu.Unlock()
}

// LakeBehind tells the scheduler, before SyncFinished, which accounts' lake (internal/lake) is
// behind their published runs and why, in words ("" when the lake holds every published run):
// the operators are told when that starts and when it ends, once each however many runs it
// lasts.
func (s *Scheduler) LakeBehind(note string) {
	s.init()
	s.mu.Lock()
	s.lakeNote = note
	s.mu.Unlock()
}

// syncAlerts tells the operators of a change in the last sync's state.
func (s *Scheduler) syncAlerts(ctx context.Context) {
	s.mu.Lock()
	synced, failedAt, failedErr, partial, clockNote, lakeNote := s.synced, s.failedAt, s.failedErr, s.partial, s.clockNote, s.lakeNote
	s.mu.Unlock()
	if !synced {
		return
	}
	s.Alerts.State(ctx, KeySyncFailed, failedAt.IsZero(), "sync failed", failedErr)
	s.Alerts.State(ctx, KeySyncPartial, partial == "", "partial sync",
		"The last sync was published incomplete for: "+partial+" (the warehouse's sync_runs and sync_streams say what is missing).")
	s.Alerts.StateResolved(ctx, KeyServiceClock, clockNote == "", "the service's clock disagrees with this machine's", clockNote, clockBack)
	s.Alerts.StateResolved(ctx, KeyLakeBehind, lakeNote == "", "the lake is behind the published warehouse", lakeNote, lakeBack)
}

// clockBack ends the service_clock alert: what the last sync found, and what stays of the time
// the service's clock was off.
const clockBack = "The service's clock (its Date header) agrees with this machine's again, within BILLSYNC_MAX_CLOCK_SKEW: " +
	"the last sync stored its times by it. The records the service dated while its clock was ahead keep those dates " +
	"(the service does not date them again); the data-quality report's Flagged records still lists them, from the syncs that stored them."

// lakeBack ends the lake_behind alert.
const lakeBack = "The lake holds every published run again: the last run's commit landed what the lake missed."

func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	return s
}

func (s *Scheduler) poke() {
	select {
	case s.nudge <- struct{}{}:
	default:
	}
}

// Run looks for due occurrences until ctx ends.
func (s *Scheduler) Run(ctx context.Context) error {
	s.init()
	c := cron.New(cron.WithLocation(s.File.Loc))
	for _, d := range s.File.Deliveries {
		c.Schedule(d.sched, cron.FuncJob(s.poke))
	}
	c.Start()
	defer c.Stop()
	s.loadFirstStart(ctx, s.Options.now())
	s.reportMissed(ctx, s.Options.now())
	tick := time.NewTicker(s.Poll)
	defer tick.Stop()
	for {
		s.Check(ctx, s.Options.now())
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		case <-s.nudge:
		}
	}
}

// due are a delivery's occurrences in (now-late_window, now], one per as-of date (its first
// time), oldest first.
func (d *Delivery) due(now time.Time, loc *time.Location) []Occurrence {
	var out []Occurrence
	seen := map[string]bool{}
	t := d.Next(now.Add(-d.LateWindow.Duration))
	for i := 0; !t.IsZero() && !t.After(now) && i < 100000; i++ {
		asOf, err := AsOfDate(d.AsOf, t, loc)
		if err == nil && !seen[asOf.Format(time.DateOnly)] {
			seen[asOf.Format(time.DateOnly)] = true
			out = append(out, Occurrence{Delivery: d, AsOf: asOf, Scheduled: t})
		}
		t = d.Next(t)
	}
	return out
}

// Check delivers every due occurrence not yet sent, oldest first. A problem with one is
// logged, journaled and alerted; it never stops the others. Until a warehouse is published
// (a new install's first sync), it waits: no delivery, no alert about a warehouse that cannot
// exist yet.
func (s *Scheduler) Check(ctx context.Context, now time.Time) {
	s.init()
	if !s.loadFirstStart(ctx, now) {
		return // the journal is busy: the next check
	}
	var occs []Occurrence
	for _, d := range s.File.Deliveries {
		for _, occ := range d.due(now, s.File.Loc) {
			if !occ.Scheduled.Before(s.firstStart) {
				occs = append(occs, occ)
			}
		}
	}
	sort.SliceStable(occs, func(i, j int) bool { return occs[i].Scheduled.Before(occs[j].Scheduled) })
	_, err := os.Stat(s.Options.DB)
	s.mu.Lock()
	firstSync := err != nil && !s.synced
	if firstSync {
		// Not late for having waited for the first sync.
		for _, occ := range occs {
			s.waited[occKey{occ.Delivery.Name, occ.AsOf.Format(time.DateOnly)}] = true
		}
		if !s.toldWait {
			s.toldWait = true
			s.Log.Info("deliveries and alerts wait for the first sync: no warehouse is published yet", "db", s.Options.DB)
		}
	}
	s.mu.Unlock()
	if firstSync {
		return
	}
	s.syncAlerts(ctx)
	if s.NoSyncAlert > 0 {
		s.loadLastOK(ctx)
		s.mu.Lock()
		since := s.lastOK
		if since.IsZero() {
			since = s.started
		}
		s.mu.Unlock()
		quiet := now.Sub(since) > s.NoSyncAlert
		s.Alerts.State(ctx, KeyNoSync, !quiet, fmt.Sprintf("no successful sync for more than %s", s.NoSyncAlert),
			fmt.Sprintf("The last successful sync: %s.", whenText(s.lastOK, s.Options.loc())))
	}
	if s.Alerts != nil && ctx.Err() == nil {
		s.jobAlerts(ctx)
		s.dqAlerts(ctx, now)
	}
	for _, occ := range occs {
		if ctx.Err() != nil {
			return
		}
		s.one(ctx, now, occ)
	}
}

// loadFirstStart reads, once, when a scheduler first started against the journal (recording
// now when none did); false while the journal cannot be read.
func (s *Scheduler) loadFirstStart(ctx context.Context, now time.Time) bool {
	s.mu.Lock()
	known := !s.firstStart.IsZero()
	s.mu.Unlock()
	if known {
		return true
	}
	j, err := openJournal(ctx, s.Options.journalPath())
	if err != nil {
		s.Log.Info("delivery journal: cannot read the first start now", "err", err)
		return false
	}
	t, err := j.firstStart(ctx, now)
	if cerr := j.close(); err == nil {
		err = cerr
	}
	if err != nil {
		s.Log.Error("delivery journal", "err", err)
		return false
	}
	s.mu.Lock()
	s.firstStart = t
	s.mu.Unlock()
	return true
}

func (s *Scheduler) one(ctx context.Context, now time.Time, occ Occurrence) {
	d := occ.Delivery
	k := occKey{d.Name, occ.AsOf.Format(time.DateOnly)}
	s.mu.Lock()
	if t, ok := s.retryAt[k]; ok && now.Before(t) {
		s.mu.Unlock()
		return
	}
	if !s.failedAt.IsZero() {
		occ.SyncFailed = fmt.Sprintf(texts(d.Locale)["stale_failed"], report.DateTime(s.failedAt, d.Locale, s.Options.loc()), s.failedErr)
	}
	occ.Late = now.Sub(occ.Scheduled) > s.LateAfter && !s.waited[k]
	s.mu.Unlock()
	occ.WaitUntil = occ.Scheduled.Add(d.StaleWait.Duration)
	log := s.Log.With("delivery", d.Name, "as_of", k.asOf)
	res, err := Deliver(ctx, s.Options, occ)
	// Alerts go out once the bookkeeping is done, without the lock SyncFinished takes.
	var alerts []func()
	defer func() {
		for _, a := range alerts {
			a()
		}
	}()
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case errors.Is(err, ErrBusy):
		log.Info("another process is delivering; looking again later", "err", err)
	case res.State == "waiting":
		s.waited[k] = true
	case err == nil && (res.State == "refused" || res.State == "unknown"):
		// Journaled and alerted when it happened; a person decides (report deliver).
	case err != nil:
		if s.Observer != nil {
			s.Observer.DeliveryDone(false, now)
		}
		s.failures[k]++
		wait := min(5*time.Minute<<(s.failures[k]-1), time.Hour)
		s.retryAt[k] = now.Add(wait)
		detail := "As of " + k.asOf + ": " + oneLine(err.Error())
		by := "report deliver " + d.Name + " -as-of " + k.asOf
		switch res.State {
		case "refused":
			detail += "\nThe server refused it: the daemon does not send it again. Once the cause is fixed: " + by
		case "unknown":
			detail += fmt.Sprintf("\nThe recipients may have it. The next attempt, in %s, sends it once more marked as resent, "+
				"with the same Message-ID <%s>; after a second unknown outcome only a person sends it again (%s).", wait, res.MessageID, by)
		default:
			detail += fmt.Sprintf("\nNobody has it; tried again in %s.", wait)
		}
		log.Error("delivery "+res.State+"; trying again later", "in", wait, "failures", s.failures[k], "err", err)
		alerts = append(alerts, func() {
			s.Alerts.State(ctx, keyDeliveryPrefix+d.Name, false, "delivery "+d.Name+" failed", detail)
		})
	case res.State == "sent" || res.State == "outbox":
		if s.Observer != nil {
			s.Observer.DeliveryDone(true, s.Options.now())
		}
		delete(s.retryAt, k)
		delete(s.failures, k)
		delete(s.waited, k)
		if res.Stale != "" {
			alerts = append(alerts, func() {
				s.Alerts.Event(ctx, "stale:"+d.Name+":"+k.asOf, fmt.Sprintf("delivery %s as of %s went out stale", d.Name, k.asOf), res.Stale)
			})
		}
		alerts = append(alerts, func() { s.Alerts.State(ctx, keyDeliveryPrefix+d.Name, true, "delivery "+d.Name+" failed", "") })
	}
}

// reportMissed logs and alerts the occurrences older than their late_window that the journal
// lacks: those since the delivery's newest journaled as-of date, up to 31 days back.
func (s *Scheduler) reportMissed(ctx context.Context, now time.Time) {
	j, err := openJournal(ctx, s.Options.journalPath())
	if err != nil {
		s.Log.Warn("delivery journal: cannot look for missed occurrences", "err", err)
		return
	}
	var missed []string
	for _, d := range s.File.Deliveries {
		last, err := j.lastAsOf(ctx, d.Name)
		if err != nil || last == "" {
			continue // a new delivery has missed nothing
		}
		t := d.Next(now.Add(-31 * 24 * time.Hour))
		for i := 0; !t.IsZero() && now.Sub(t) > d.LateWindow.Duration && i < 100000; i++ {
			if asOf, err := AsOfDate(d.AsOf, t, s.File.Loc); err == nil && asOf.Format(time.DateOnly) > last && !t.Before(s.firstStart) {
				missed = append(missed, fmt.Sprintf("%s as of %s (due %s)", d.Name, asOf.Format(time.DateOnly),
					t.In(s.File.Loc).Format("2006-01-02 15:04 MST")))
				last = asOf.Format(time.DateOnly)
			}
			t = d.Next(t)
		}
	}
	j.close()
	if len(missed) == 0 {
		return
	}
	s.Log.Warn("occurrences missed beyond their late_window are not sent: send them by hand with report deliver NAME -as-of DATE",
		"missed", strings.Join(missed, "; "))
	s.Alerts.Event(ctx, "missed:"+strings.Join(missed, "; "), fmt.Sprintf("%d delivery occurrences missed", len(missed)),
		"Not sent, older than their late_window (report deliver NAME -as-of DATE sends one):\n"+strings.Join(missed, "\n"))
}

func whenText(t time.Time, loc *time.Location) string {
	if t.IsZero() {
		return "none since it started"
	}
	return t.In(loc).Format("2006-01-02 15:04 MST")
}

// loadLastOK reads, once, when the warehouse's accounts last synced successfully: a restarted
// daemon counts the hours without a sync from there, not from its start.
func (s *Scheduler) loadLastOK(ctx context.Context) {
	s.mu.Lock()
	loaded := s.okLoaded
	s.okLoaded = true
	s.mu.Unlock()
	if loaded {
		return
	}
	if _, err := os.Stat(s.Options.DB); err != nil {
		return // no sync published yet
	}
	t, err := lastSuccess(ctx, s.Options.DB)
	if err != nil {
		s.Log.Warn("alerts: cannot read the warehouse's last successful sync", "err", err)
		return
	}
	s.mu.Lock()
	if t.After(s.lastOK) {
		s.lastOK = t
	}
	s.mu.Unlock()
}

// jobAlerts tells the operators while job rows wait for a person (syncer job resolve).
func (s *Scheduler) jobAlerts(ctx context.Context) {
	path := s.Options.JobJournal
	if path == "" {
		path = journalfile.DefaultPath(s.Options.DB)
	}
	n, plans, err := unresolvedJobs(ctx, path)
	if ctx.Err() != nil {
		return
	}
	if err != nil {
		// A job writing the journal refuses readers: the next check reads it.
		s.Log.Info("alerts: cannot read the job journal now", "err", err)
		return
	}
	s.Alerts.State(ctx, KeyUnresolvedJobs, n == 0, "unresolved job rows waiting",
		fmt.Sprintf("%d job rows are unresolved: billsync could not prove whether their change was made, and sends nothing for them until a person settles each (syncer job show PLAN_ID, then syncer job resolve; docs/jobs.md).\n%s",
			n, strings.Join(plans, "\n")))
}

// dqAlerts tells the operators while the data-quality report lists at least DQMin exceptions.
// The report runs again only when the warehouse changed (a sync published) or the date did.
func (s *Scheduler) dqAlerts(ctx context.Context, now time.Time) {
	if s.DQMin <= 0 {
		return
	}
	fi, err := os.Stat(s.Options.DB)
	if err != nil {
		return // no sync published yet
	}
	asOf := now.In(s.Options.loc())
	stamp := fmt.Sprintf("%d %d %s", fi.ModTime().UnixNano(), fi.Size(), asOf.Format(time.DateOnly))
	s.mu.Lock()
	same := stamp == s.dqStamp
	s.mu.Unlock()
	if same {
		return
	}
	n, parts, err := dqExceptions(ctx, s.Options, time.Date(asOf.Year(), asOf.Month(), asOf.Day(), 0, 0, 0, 0, time.UTC))
	if ctx.Err() != nil {
		return
	}
	if err != nil {
		s.Log.Warn("alerts: cannot count the data-quality exceptions", "err", err)
		return
	}
	s.mu.Lock()
	s.dqStamp = stamp
	s.mu.Unlock()
	s.Alerts.State(ctx, KeyDQExceptions, n < s.DQMin, fmt.Sprintf("data-quality exceptions (%d or more)", s.DQMin),
		fmt.Sprintf("The data-quality report as of %s lists %d exceptions (%s); the threshold is %d (BILLSYNC_ALERT_DQ_MIN). report data-quality -as-of %s writes the list.",
			asOf.Format(time.DateOnly), n, parts, s.DQMin, asOf.Format(time.DateOnly)))
}
