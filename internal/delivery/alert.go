package delivery

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/billsync/billsync/internal/duckfile"
	gomail "github.com/wneessen/go-mail"
)

// Observer hears of the alert states and the deliveries as they change, for metrics. Its
// methods must not block.
type Observer interface {
	// AlertState is a problem's state as recorded (active true = the problem is present).
	AlertState(key string, active bool)
	// DeliveryDone is a scheduled occurrence's send: sent or failed, at at.
	DeliveryDone(sent bool, at time.Time)
}

// Alerter e-mails the operators (BILLSYNC_ALERTS_TO) when a problem starts and when it ends:
// one message per change of state, not one per run. The states and the messages live in the
// delivery journal (alert_states, alerts), so a restart or a second daemon compares what it
// sees with what was told and tells a persisting problem once; a message is written in the
// same transaction as the change and sent after, so a failed send or a crash leaves it to be
// sent by the next check (a crash after the server accepted it sends it once more, marked
// "(resent)"). A nil Alerter does nothing; without To the states are kept and logged, and no
// message is written.
type Alerter struct {
	To       []string
	Options  Options // the transport, the sender and the journal
	Log      *slog.Logger
	Observer Observer // nil: none

	mu       sync.Mutex
	seen     map[string]bool // per key, the state last recorded or seen in the journal
	queue    []observation   // changes seen, not yet compared with the journal
	loaded   bool            // the journal's states were read
	unsent   bool            // a message waits to be sent
	lastSend time.Time       // the last failed send: retried after a minute
}

type observation struct {
	key           string
	active        bool
	event         bool // a one-off message: sent once per key
	what, detail  string
	resolved      string // the message's body when the problem ends; "" = "It works again."
	subject, body string
	at            time.Time
}

// Alert keys: one problem each, the label of its metric.
const (
	KeySyncFailed     = "sync_failed"
	KeySyncPartial    = "sync_partial"
	KeyServiceClock   = "service_clock"
	KeyLakeBehind     = "lake_behind"
	KeyNoSync         = "no_sync"
	KeyDQExceptions   = "dq_exceptions"
	KeyUnresolvedJobs = "unresolved_jobs"
	keyDeliveryPrefix = "delivery_failed:"
)

// State records whether the problem key is present (ok false) and tells the operators when
// that differs from what the journal recorded.
func (a *Alerter) State(ctx context.Context, key string, ok bool, what, detail string) {
	a.StateResolved(ctx, key, ok, what, detail, "")
}

// StateResolved is State whose message when the problem ends says resolved (what is right again),
// not "It works again.".
func (a *Alerter) StateResolved(ctx context.Context, key string, ok bool, what, detail, resolved string) {
	if a == nil {
		return
	}
	a.mu.Lock()
	// Compared with the newest change of the key still queued, else with the journal's: the
	// queue holds changes only, so it stays small while the journal is busy.
	was, known := a.seen[key]
	for _, o := range a.queue {
		if o.key == key && !o.event {
			was, known = o.active, true
		}
	}
	if !known || was != !ok {
		a.queue = append(a.queue, observation{key: key, active: !ok, what: what, detail: detail, resolved: resolved, at: a.Options.now()})
	}
	a.mu.Unlock()
	a.flush(ctx)
}

// Event tells the operators something that happened once. A key names it: an event with a
// key the journal has is not told again (a restart reporting the same missed occurrences);
// "" tells it every time.
func (a *Alerter) Event(ctx context.Context, key, subject, body string) {
	if a == nil {
		return
	}
	a.mu.Lock()
	if key == "" || !slices.ContainsFunc(a.queue, func(o observation) bool { return o.event && o.key == key }) {
		a.queue = append(a.queue, observation{key: key, event: true, subject: subject, body: body, at: a.Options.now()})
	}
	a.mu.Unlock()
	a.flush(ctx)
}

func (a *Alerter) log() *slog.Logger {
	if a.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return a.Log
}

// flush compares the changes seen with the journal, records those that differ with their
// messages, and sends the messages not yet sent. With the journal busy (another process
// delivering) the changes wait for the next call: none is lost.
func (a *Alerter) flush(ctx context.Context) {
	a.mu.Lock()
	defer a.mu.Unlock()
	now := a.Options.now()
	retry := a.unsent && now.Sub(a.lastSend) >= time.Minute
	if a.loaded && len(a.queue) == 0 && !retry {
		return
	}
	if ctx.Err() != nil {
		return // stopping: the changes are told by the next start, which sees them again
	}
	j, err := openJournal(ctx, a.Options.journalPath())
	if err != nil {
		if errors.Is(err, ErrBusy) || ctx.Err() != nil {
			a.log().Info("alerts wait for the delivery journal", "err", err)
		} else {
			a.journalErr(ctx, err)
		}
		return
	}
	defer func() {
		if err := j.close(); err != nil {
			a.log().Error("closing the delivery journal", "err", err)
		}
	}()
	if !a.loaded {
		states, err := j.alertStates(ctx)
		if err != nil {
			a.journalErr(ctx, err)
			return
		}
		a.seen = states
		a.loaded = true
		if a.Observer != nil {
			for k, v := range states {
				a.Observer.AlertState(k, v)
			}
		}
	}
	for len(a.queue) > 0 {
		o := a.queue[0]
		if err := a.record(ctx, j, o); err != nil {
			a.journalErr(ctx, err)
			return
		}
		a.queue = a.queue[1:]
	}
	if len(a.To) > 0 {
		a.sendUnsent(ctx, j)
	}
}

// record compares one observation with the journal (read again: another process may have
// recorded it) and records it, and its message, when it is a change.
func (a *Alerter) record(ctx context.Context, j *journal, o observation) error {
	to := strings.Join(a.To, ", ")
	if o.event {
		if o.key != "" {
			seen, err := j.eventSeen(ctx, o.key)
			if err != nil || seen {
				return err
			}
		}
		a.log().Warn("alert", "subject", o.subject, "detail", o.body)
		if len(a.To) == 0 {
			return nil
		}
		a.unsent = true
		_, err := j.db.ExecContext(ctx, stmts.Get("alert_insert"), o.key, "event", "[billsync] "+o.subject, o.body, to, o.at.UTC())
		return err
	}
	states, err := j.alertStates(ctx)
	if err != nil {
		return err
	}
	a.seen = states
	if states[o.key] == o.active {
		a.seen[o.key] = o.active // a key the journal lacks is no problem
		if a.Observer != nil {
			a.Observer.AlertState(o.key, o.active) // every alert's gauge shows, at 0 too
		}
		return nil
	}
	kind, subject, body := "problem", "PROBLEM: "+o.what, o.detail
	if !o.active {
		kind, subject, body = "resolved", "RESOLVED: "+o.what, "It works again."
		if o.resolved != "" {
			body = o.resolved
		}
	}
	a.log().Warn("alert", "subject", subject, "detail", body)
	err = duckfile.InTx(ctx, j.db, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, stmts.Get("alert_state_delete"), o.key); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, stmts.Get("alert_state_insert"), o.key, o.active, o.what, nullString(o.detail), o.at.UTC()); err != nil {
			return err
		}
		if len(a.To) == 0 {
			return nil
		}
		_, err := tx.ExecContext(ctx, stmts.Get("alert_insert"), o.key, kind, "[billsync] "+subject, body, to, o.at.UTC())
		return err
	})
	if err != nil {
		return fmt.Errorf("record alert %s: %w", o.key, err)
	}
	a.seen[o.key] = o.active
	a.unsent = a.unsent || len(a.To) > 0
	if a.Observer != nil {
		a.Observer.AlertState(o.key, o.active)
	}
	return nil
}

// sendUnsent sends the journal's messages not yet accepted, oldest first; it stops at the
// first failure and tries again a minute later.
func (a *Alerter) sendUnsent(ctx context.Context, j *journal) {
	type msg struct {
		id                   int64
		subject, body, state string
	}
	rows, err := j.db.QueryContext(ctx, stmts.Get("alerts_unsent"))
	if err != nil {
		a.journalErr(ctx, err)
		return
	}
	var msgs []msg
	for rows.Next() {
		var m msg
		if err := rows.Scan(&m.id, &m.subject, &m.body, &m.state); err != nil {
			rows.Close()
			a.journalErr(ctx, err)
			return
		}
		msgs = append(msgs, m)
	}
	rows.Close()
	for _, m := range msgs {
		subject := m.subject
		if m.state == "sending" {
			// A crash between the hand-over and the record: the server may have it.
			subject += " (resent)"
		}
		if _, err := j.db.ExecContext(ctx, stmts.Get("alert_mark"), "sending", 1, nil, nil, m.id); err != nil {
			a.journalErr(ctx, err)
			return
		}
		if testBeforeAlertSend != nil {
			testBeforeAlertSend()
		}
		if err := a.send(ctx, subject, m.body); err != nil {
			a.lastSend = a.Options.now()
			// A message the server took whole without answering may have arrived: it stays
			// sending, so the next check sends it once more marked "(resent)"; after a resend's
			// unknown outcome it is not sent again (the log says so).
			state := "pending"
			switch {
			case outcome(err) == "unknown" && m.state == "sending":
				state = "unknown"
				a.log().Error("alert's outcome unknown twice; not sent again", "subject", subject, "err", err)
			case outcome(err) == "unknown":
				state = "sending"
				a.log().Error("alert's outcome unknown; sent once more, marked resent, at the next check", "subject", subject, "err", err)
			default:
				a.log().Error("alert not sent; trying again later", "subject", subject, "err", err)
			}
			if _, err := j.db.ExecContext(context.WithoutCancel(ctx), stmts.Get("alert_mark"), state, 0, err.Error(), nil, m.id); err != nil {
				a.journalErr(ctx, err)
			}
			if state == "unknown" {
				continue
			}
			return
		}
		if testAfterAlertAccept != nil {
			testAfterAlertAccept()
		}
		if _, err := j.db.ExecContext(context.WithoutCancel(ctx), stmts.Get("alert_mark"), "sent", 0, nil, time.Now().UTC(), m.id); err != nil {
			a.journalErr(ctx, err)
			return
		}
	}
	a.unsent = false
}

// testBeforeAlertSend and testAfterAlertAccept, when set by a test, run around an alert's send.
var testBeforeAlertSend, testAfterAlertAccept func()

func (j *journal) alertStates(ctx context.Context) (map[string]bool, error) {
	rows, err := j.db.QueryContext(ctx, stmts.Get("alert_states"))
	if err != nil {
		return nil, fmt.Errorf("alert states: %w", err)
	}
	defer rows.Close()
	out := map[string]bool{}
	for rows.Next() {
		var k string
		var v bool
		if err := rows.Scan(&k, &v); err != nil {
			return nil, err
		}
		out[k] = v
	}
	return out, rows.Err()
}

func (j *journal) eventSeen(ctx context.Context, key string) (bool, error) {
	var seen bool
	if err := j.db.QueryRowContext(ctx, stmts.Get("alert_event_seen"), key).Scan(&seen); err != nil {
		return false, fmt.Errorf("alerts: %w", err)
	}
	return seen, nil
}

func (a *Alerter) send(ctx context.Context, subject, body string) error {
	m := gomail.NewMsg(gomail.WithNoDefaultUserAgent())
	if err := m.From(a.Options.From); err != nil {
		return err
	}
	if err := m.To(a.To...); err != nil {
		return err
	}
	m.Subject(subject)
	m.SetMessageIDWithValue(messageID("alert", a.Options.now().UTC().Format("20060102T150405"), a.Options.From))
	m.SetDateWithValue(a.Options.now())
	m.SetUserAgent("billsync")
	m.SetBodyString(gomail.TypeTextPlain, body+"\n\n-- \nbillsync alerts (BILLSYNC_ALERTS_TO), one per change of state.\n")
	if a.Options.SMTP == nil {
		_, err := toOutbox(m, a.Options.Outbox, "alert", "operators", a.Options.loc())
		return err
	}
	if err := send(ctx, a.Options.SMTP, m); err != nil {
		return fmt.Errorf("alert: %w", err)
	}
	return nil
}

// journalErr logs a failed read or write of the delivery journal: an error, unless the daemon is
// stopping (its context cancelled: DuckDB then answers "Interrupted!"), which is no failure; what
// was not recorded is seen again by the next start.
func (a *Alerter) journalErr(ctx context.Context, err error) {
	if ctx.Err() != nil {
		a.log().Info("alerts stopped before the delivery journal was updated", "err", err)
		return
	}
	a.log().Error("alerts: delivery journal", "err", err)
}
