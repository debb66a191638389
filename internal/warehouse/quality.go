package warehouse

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/billsync/billsync/internal/entity"
	"github.com/billsync/billsync/internal/syncdata"
)

// recordConflicts stores a stream's conflicting duplicates of this run in data_quality_conflicts,
// replacing what an earlier attempt of the run recorded for the stream.
func (b *Build) recordConflicts(ctx context.Context, account string, runID int64, e entity.Name, stream string,
	observedAt time.Time, cs []syncdata.Conflict) error {
	err := b.inTx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, stateSQL.Get("delete_conflicts"), account, runID, stream); err != nil {
			return err
		}
		for _, c := range cs {
			if _, err := tx.ExecContext(ctx, stateSQL.Get("insert_conflict"), account, string(e), stream, c.ID, runID,
				observedAt.UTC(), c.Path, c.FirstPage, c.FirstIdx, rawOrNull(c.FirstRaw), c.SecondPage, c.SecondIdx,
				rawOrNull(c.SecondRaw)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("record %d conflicting duplicates of %s: %w", len(cs), stream, err)
	}
	return nil
}

func rawOrNull(r json.RawMessage) any {
	if r == nil {
		return nil
	}
	return string(r)
}

// Flag records flagged records of the run in data_quality_flags, at the run's observation time.
func (s *Sink) Flag(ctx context.Context, flags []syncdata.Flag) error {
	if len(flags) == 0 {
		return nil
	}
	at := s.ObservedAt()
	return s.call(ctx, func(ctx context.Context) error { return s.b.recordFlags(ctx, s.run, at, flags) })
}

func (b *Build) recordFlags(ctx context.Context, run syncdata.Run, observedAt time.Time, flags []syncdata.Flag) error {
	err := b.inTx(ctx, func(tx *sql.Tx) error {
		for _, f := range flags {
			if _, err := tx.ExecContext(ctx, stateSQL.Get("insert_flag"), run.Account, run.ID, observedAt.UTC(), f.Entity,
				nullIfEmpty(f.ID), f.Kind, nullIfEmpty(f.Field), f.Detail, nullIfEmpty(f.Path), f.Page, f.Item); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("record %d data-quality flags: %w", len(flags), err)
	}
	return nil
}

func nullIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// FlagServiceClock flags, in data_quality_flags, the records this run stored whose times lie
// after `after` (this machine's clock at the run, plus the clock skew bound): a service whose
// clock ran ahead dated them, and they are stored as it dated them. note ends each flag's detail
// (the clocks and the offset, in words). It says how many records it flagged.
func (s *Sink) FlagServiceClock(ctx context.Context, after time.Time, note string) (n int64, err error) {
	at := s.ObservedAt()
	err = s.call(ctx, func(ctx context.Context) error {
		n, err = s.b.flagServiceClock(ctx, s.run, at, after, note)
		return err
	})
	return n, err
}

func (b *Build) flagServiceClock(ctx context.Context, run syncdata.Run, observedAt, after time.Time, note string) (int64, error) {
	var total int64
	err := b.inTx(ctx, func(tx *sql.Tx) error {
		for _, d := range entity.All() {
			if d.Rule == entity.FillDetail {
				continue
			}
			table := d.Table
			if table == "" {
				table = string(d.Name)
			}
			for _, f := range d.Fields {
				if f.Type != entity.Time || f.Future || len(f.JSON) == 0 {
					continue
				}
				q := strings.NewReplacer("__TABLE__", table, "__COL__", f.Col).Replace(stateSQL.Get("flag_service_clock"))
				r, err := tx.ExecContext(ctx, q, run.Account, run.ID, observedAt.UTC(), string(d.Name),
					syncdata.FlagServiceClock, f.JSON[0], note, after.UTC())
				if err != nil {
					return fmt.Errorf("%s.%s: %w", table, f.Col, err)
				}
				n, _ := r.RowsAffected()
				total += n
			}
		}
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("flag records dated by the service's clock: %w", err)
	}
	return total, nil
}
