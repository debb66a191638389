package delivery

import (
	"context"
	"fmt"
	"log/slog"
	"sync"

	gomail "github.com/wneessen/go-mail"
)

// Alerter e-mails the operators (BILLSYNC_ALERTS_TO) when a problem starts and when it ends:
// one message per change of state, not one per run. The states live in memory: after a
// restart a problem that persists is told once more. A nil Alerter only logs.
type Alerter struct {
	To      []string
	Options Options // the transport and the sender
	Log     *slog.Logger

	mu  sync.Mutex
	bad map[string]bool // problems under way
}

// State records whether the problem key is present (ok false) and says so when that changed.
func (a *Alerter) State(ctx context.Context, key string, ok bool, what, detail string) {
	if a == nil {
		return
	}
	a.mu.Lock()
	if a.bad == nil {
		a.bad = map[string]bool{}
	}
	was := a.bad[key]
	a.bad[key] = !ok
	a.mu.Unlock()
	switch {
	case !ok && !was:
		a.Event(ctx, "PROBLEM: "+what, detail)
	case ok && was:
		a.Event(ctx, "RESOLVED: "+what, "It works again.")
	}
}

// Event sends one alert now.
func (a *Alerter) Event(ctx context.Context, subject, body string) {
	if a == nil {
		return
	}
	log := a.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	log.Warn("alert", "subject", subject, "detail", body)
	if len(a.To) == 0 {
		return
	}
	if err := a.send(ctx, "[billsync] "+subject, body); err != nil {
		log.Error("alert not sent", "subject", subject, "err", err)
	}
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
		_, err := toOutbox(m, a.Options.Outbox, "alert", "operators")
		return err
	}
	if err := send(ctx, a.Options.SMTP, m); err != nil {
		return fmt.Errorf("alert: %w", err)
	}
	return nil
}
