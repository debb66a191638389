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

// PrivateDir makes dir ready for a file only its owner may read and write (a journal): created
// 0750 when missing, and refused when every user may write in it, since anyone could then put a
// file of their own (a DuckDB .wal that would be replayed into the journal) or a link in its place.
func PrivateDir(dir string) error {
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return err
	}
	fi, err := os.Stat(dir)
	if err != nil {
		return err
	}
	if fi.Mode().Perm()&0o002 != 0 {
		return fmt.Errorf("folder %s is writable by every user (%v): anyone could replace or add to the files kept there; chmod o-w %s, or keep them in a folder of their own",
			dir, fi.Mode().Perm(), dir)
	}
	return nil
}

// Private narrows a DuckDB file and its write-ahead log (file+".wal", which holds its latest
// changes) to their owner (0600). DuckDB creates both with the process's umask and re-creates the
// log after each checkpoint, so a writer calls it after opening and after each write.
func Private(file string) error { return narrow(file, 0o600) }

// GroupDir is PrivateDir for a file its owner's group shares (the job journal, which each person
// who plans or approves writes under their own login): created 0770 when missing, and refused
// when every user may write in it.
func GroupDir(dir string) error {
	if err := os.MkdirAll(dir, 0o770); err != nil {
		return err
	}
	return PrivateDir(dir)
}

// GroupPrivate narrows a DuckDB file and its write-ahead log to their owner and group (0660):
// never any access for others. Only a file's owner may change its mode, so a group member's
// process leaves a file that already gives others nothing as it is, and says so when it cannot
// narrow one that does.
func GroupPrivate(file string) error {
	for _, p := range []string{file, file + ".wal"} {
		fi, err := os.Stat(p)
		if os.IsNotExist(err) {
			continue
		}
		if err != nil {
			return err
		}
		if fi.Mode().Perm()&^0o660 == 0 {
			continue
		}
		if err := os.Chmod(p, 0o660); err != nil {
			return fmt.Errorf("%s is %v and cannot be narrowed by this login: its owner runs chmod o-rwx %s (%w)", p, fi.Mode().Perm(), p, err)
		}
	}
	return nil
}

func narrow(file string, mode os.FileMode) error {
	for _, p := range []string{file, file + ".wal"} {
		if err := os.Chmod(p, mode); err != nil && !os.IsNotExist(err) {
			return err
		}
	}
	return nil
}
