package warehouse

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
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
