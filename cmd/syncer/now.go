package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"syscall"

	"github.com/billsync/billsync/internal/duckfile"
)

// daemonLock is the file a daemon holds (flock, its pid inside) while it runs beside the
// warehouse db: syncer -now finds it there.
func daemonLock(db string) string { return filepath.Join(filepath.Dir(db), "billsync-daemon") }

// listenForSyncNow makes SIGUSR1 ask the daemon for one sync now, and holds the daemon's lock
// so syncer -now finds this process. A second daemon beside the same warehouse runs without it
// (the first one answers -now). release stops both.
func listenForSyncNow(ctx context.Context, db string, log *slog.Logger) (<-chan struct{}, func()) {
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGUSR1)
	asked := make(chan struct{})
	done := make(chan struct{})
	go func() {
		for {
			select {
			case <-sig:
				log.Info("a sync was asked for (SIGUSR1, syncer -now)")
				select {
				case asked <- struct{}{}:
				case <-done:
					return
				case <-ctx.Done():
					return
				}
			case <-done:
				return
			case <-ctx.Done():
				return
			}
		}
	}()
	lock, err := duckfile.Acquire(daemonLock(db))
	if err != nil {
		log.Warn("another daemon runs beside this warehouse: syncer -now asks that one", "err", err)
	}
	return asked, func() {
		close(done)
		signal.Stop(sig)
		lock.Release()
	}
}

// askDaemon is syncer -now: SIGUSR1 to the daemon that holds the lock beside db.
func askDaemon(db string, stdout io.Writer) error {
	lock, err := duckfile.Acquire(daemonLock(db))
	var held *duckfile.HeldError
	if !errors.As(err, &held) {
		if err == nil {
			lock.Release()
			return fmt.Errorf("no syncer daemon runs beside %s (none holds %s.lock): start one with syncer, or sync once with syncer -once",
				db, daemonLock(db))
		}
		return err
	}
	pid, perr := strconv.Atoi(held.PID)
	if perr != nil || pid <= 0 {
		return fmt.Errorf("the daemon's lock %s names no pid (%q): try again in a moment", held.Path, held.PID)
	}
	if err := syscall.Kill(pid, syscall.SIGUSR1); err != nil {
		return fmt.Errorf("asking the daemon (pid %d) for a sync: %w", pid, err)
	}
	fmt.Fprintf(stdout, "asked the syncer daemon (pid %d) for one sync now; its log says when it starts and ends (a sync already running serves the request)\n", pid)
	return nil
}
