package duckfile

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// Lock is an exclusive, non-blocking flock on a file's lock file (file+".lock"), which holds the
// holder's pid while it is held and is removed when released, so no lock file is left behind.
// The kernel drops a flock when its process dies, so a killed holder never leaves it held.
type Lock struct {
	f *os.File
}

// HeldError says that another process (or another handle in this one) holds a lock.
type HeldError struct {
	Path string // the lock file
	PID  string // the holder's pid as its lock file says, "unknown" when it says nothing yet
}

func (e *HeldError) Error() string { return fmt.Sprintf("%s held by pid %s", e.Path, e.PID) }

// Acquire takes the lock of file: file+".lock", created if missing. When another holds it, the
// error is a *HeldError naming the lock file and the holder's pid.
func Acquire(file string) (*Lock, error) {
	p := file + ".lock"
	for {
		// 0o666 less the umask, as DuckDB creates its files: people who share a journal under their own
		// uids (one group, umask 007) each recreate the lock the last holder removed, and open it to write.
		f, err := os.OpenFile(p, os.O_RDWR|os.O_CREATE, 0o666)
		if err != nil {
			return nil, fmt.Errorf("open lock %s: %w", p, err)
		}
		if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
			holder, _ := os.ReadFile(p)
			f.Close()
			if errors.Is(err, syscall.EWOULDBLOCK) {
				return nil, &HeldError{Path: p, PID: pidText(holder)}
			}
			return nil, fmt.Errorf("lock %s: %w", p, err)
		}
		// The holder before us removes the file when it releases (Release). If we locked a file
		// that was removed meanwhile, the lock guards nothing: try again with the file now at p.
		if sameFile(f, p) {
			if err := f.Truncate(0); err == nil {
				f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
			}
			return &Lock{f: f}, nil
		}
		f.Close()
	}
}

// Path is the lock file.
func (l *Lock) Path() string { return l.f.Name() }

// Release removes the lock file while still holding it, so a process that opened the old file
// retries (Acquire), then unlocks. A nil Lock releases nothing.
func (l *Lock) Release() error {
	if l == nil || l.f == nil {
		return nil
	}
	os.Remove(l.f.Name())
	err := l.f.Close() // closing the descriptor releases the flock
	l.f = nil
	return err
}

// sameFile says whether the open f is still the file at path p.
func sameFile(f *os.File, p string) bool {
	fi, err := f.Stat()
	if err != nil {
		return false
	}
	pi, err := os.Stat(p)
	return err == nil && os.SameFile(fi, pi)
}

func pidText(b []byte) string {
	s := strings.TrimSpace(string(b))
	if s == "" {
		return "unknown"
	}
	return s
}
