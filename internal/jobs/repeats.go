package jobs

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/billsync/billsync/internal/config"
)

// DefaultRepeatWindow is how far back planning and applying look for an earlier send of the same change: a
// little over a month, so last month's top-up of the same customer and amount is caught. It is
// BILLSYNC_JOB_REPEAT_WINDOW's default (config.Jobs).
var DefaultRepeatWindow = config.Defaults[config.Jobs]().RepeatWindow

// repeatColumn is the optional input column that lets one row repeat an earlier send.
const repeatColumn = "repeat"

// repeatMark reads the row's repeat cell: yes (any case) lets it repeat, blank does not, anything else is an
// error, since a person who wrote "ya" or "1" meant something and must not be second-guessed.
func repeatMark(r *rowReader) bool {
	v := r.get(repeatColumn)
	switch {
	case v == "":
		return false
	case strings.EqualFold(v, "yes"):
		return true
	}
	r.fail(repeatColumn, "repeat %q: write yes to send this row although billsync sent the same change before, "+
		"or leave it blank", v)
	return false
}

// earlier is a row of another plan that billsync sent.
type earlier struct {
	plan, file string
	seq, line  int
	state      State
	sentAt     time.Time // billsync's clock when it was last sent, journaled before the request
	sentID     int64     // the sent transition's place in the journal
	answeredAt time.Time // journaled after its answer (or its absence); zero when nothing was
	balance    string    // the balance the service reported in the answer, when it did
}

// repeats finds earlier sends of the same content, by the kind's repeat key.
type repeats struct {
	s     kind
	byKey map[string][]earlier // oldest send first
	since time.Time
	loc   *time.Location
}

// loadRepeats reads the sends of the account's other plans of kind s since a time, keyed by content.
func loadRepeats(ctx context.Context, db *sql.DB, s kind, account, planID string, since time.Time,
	loc *time.Location) (*repeats, error) {
	rp := &repeats{s: s, byKey: map[string][]earlier{}, since: since, loc: loc}
	if s.traits().readOnly {
		return rp, nil
	}
	err := queryEach(ctx, db, journalSQL.Get("repeat_candidates"), func(r *sql.Rows) error {
		var e earlier
		var req, state string
		var answered sql.NullTime
		if err := r.Scan(&e.plan, &e.seq, &e.line, &e.file, &req, &state, &e.sentAt, &e.sentID, &answered, &e.balance); err != nil {
			return err
		}
		e.answeredAt = answered.Time
		var q request
		if err := json.Unmarshal([]byte(req), &q); err != nil {
			return fmt.Errorf("plan %s row %d: %w", e.plan, e.seq, err)
		}
		e.state = State(state)
		k := s.repeatKey(q)
		rp.byKey[k] = append(rp.byKey[k], e)
		return nil
	}, account, string(s.name()), planID, since)
	if err != nil {
		return nil, fmt.Errorf("job journal: earlier sends of %s: %w", s.name(), err)
	}
	return rp, nil
}

// match returns what a row repeats: the latest earlier send of the same content, and how many there are.
// after > 0 counts only sends journaled after that transition: a row marked to repeat acknowledges the sends
// the person saw when planning it, not one another plan makes later.
func (rp *repeats) match(q request, after int64) (earlier, int, bool) {
	if rp.s.traits().readOnly {
		return earlier{}, 0, false
	}
	var found []earlier
	for _, e := range rp.byKey[rp.s.repeatKey(q)] {
		if e.sentID > after {
			found = append(found, e)
		}
	}
	if len(found) == 0 {
		return earlier{}, 0, false
	}
	return found[len(found)-1], len(found), true
}

// detail describes the earlier send for people (repeatOf) and for the journal's readers.
func (rp *repeats) detail(e earlier, n int) map[string]string {
	loc := rp.loc
	if loc == nil {
		loc = time.UTC
	}
	where := fmt.Sprintf("line %d", e.line)
	if e.file != "" {
		where += " of " + e.file
	}
	human := fmt.Sprintf("plan %s row %d (%s), %s: %s", e.plan, e.seq, where, lang("en").sentWhen(e.sentAt, e.answeredAt, loc), e.state)
	if n > 1 {
		human += fmt.Sprintf(" (and %d earlier send(s) of the same)", n-1)
	}
	d := map[string]string{"repeatOf": human, "repeatOfPlan": e.plan, "repeatOfSeq": strconv.Itoa(e.seq),
		"repeatOfLine": strconv.Itoa(e.line), "repeatOfFile": e.file, "repeatOfN": strconv.Itoa(n),
		"repeatOfSentAt": e.sentAt.UTC().Format(time.RFC3339Nano), "repeatOfState": string(e.state)}
	if !e.answeredAt.IsZero() {
		d["repeatOfAnsweredAt"] = e.answeredAt.UTC().Format(time.RFC3339Nano)
	}
	if e.balance != "" {
		d["repeatOfBalance"] = e.balance
	}
	return d
}

// hold returns the held detail of a row that repeats an earlier send, or nil when it does not (or may repeat it).
func (rp *repeats) hold(a *Action, planStart int64, window time.Duration) map[string]string {
	after := int64(0)
	if a.AllowRepeat {
		if planStart == 0 {
			return nil // being planned: every send so far is one the person chose to repeat
		}
		after = planStart
	}
	e, n, ok := rp.match(a.Request, after)
	if !ok {
		return nil
	}
	d := rp.detail(e, n)
	d["held"] = fmt.Sprintf("billsync sent the same change within %s: not sent; to send it anyway write yes in its "+
		"repeat column and plan the file again, or plan the whole file with -again", windowText(window))
	return d
}
