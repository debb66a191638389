// Package testpg starts a throwaway PostgreSQL cluster for a test: Debian's postgresql package
// (initdb and pg_ctl under /usr/lib/postgresql/*/bin), a data directory of its own, a free
// loopback port, stopped and removed when the test ends. PostgreSQL refuses to run as root: as
// root (CI) the cluster runs as the postgres user the package creates. Without the package the
// test is skipped, except in CI (BILLSYNC_CI=1), where it fails.
package testpg

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// bindir finds the directory of initdb and pg_ctl: Debian keeps them off PATH, one directory
// per major version (the newest is taken).
func bindir() (string, error) {
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	slices.SortFunc(dirs, func(a, b string) int {
		va, _ := strconv.Atoi(filepath.Base(filepath.Dir(a)))
		vb, _ := strconv.Atoi(filepath.Base(filepath.Dir(b)))
		return vb - va
	})
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "pg_ctl")); err == nil {
			return d, nil
		}
	}
	if p, err := exec.LookPath("pg_ctl"); err == nil {
		return filepath.Dir(p), nil
	}
	return "", fmt.Errorf("no PostgreSQL server (initdb, pg_ctl) under /usr/lib/postgresql/*/bin or on PATH")
}

// Start starts a cluster and returns the URL of its database billsync, user billsync (trust
// authentication, loopback only).
func Start(t testing.TB) string {
	t.Helper()
	bin, err := bindir()
	if err != nil {
		msg := err.Error() + ": install Debian's postgresql (.ci/run does)"
		if os.Getenv("BILLSYNC_CI") == "1" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	// t.TempDir's parents are private to root: the server's user could not reach a directory
	// under them.
	dir, err := os.MkdirTemp("", "billsync-pg-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	cred, err := runAs(dir)
	if err != nil {
		t.Fatal(err)
	}
	run := func(name string, args ...string) {
		t.Helper()
		cmd := exec.Command(filepath.Join(bin, name), args...)
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "LC_ALL=C")
		if out, err := cmd.CombinedOutput(); err != nil {
			log, _ := os.ReadFile(filepath.Join(dir, "log"))
			t.Fatalf("%s %s: %v\n%s\n%s", name, strings.Join(args, " "), err, out, log)
		}
	}
	data := filepath.Join(dir, "data")
	run("initdb", "-D", data, "-A", "trust", "-U", "billsync", "-E", "UTF8", "--no-sync")
	port := freePort(t)
	run("pg_ctl", "-D", data, "-l", filepath.Join(dir, "log"), "-w", "-o",
		fmt.Sprintf("-p %d -c listen_addresses=127.0.0.1 -c unix_socket_directories='' -c fsync=off -c max_connections=200", port), "start")
	t.Cleanup(func() {
		cmd := exec.Command(filepath.Join(bin, "pg_ctl"), "-D", data, "-m", "immediate", "-w", "stop")
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("stopping the test's PostgreSQL: %v\n%s", err, out)
		}
	})
	run("createdb", "-h", "127.0.0.1", "-p", strconv.Itoa(port), "-U", "billsync", "billsync")
	return fmt.Sprintf("postgres://billsync@127.0.0.1:%d/billsync?sslmode=disable", port)
}

// runAs is the user the server runs as: this process's, or as root the postgres user (else
// nobody), who is given dir.
func runAs(dir string) (*syscall.Credential, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	var u *user.User
	var err error
	for _, name := range []string{"postgres", "nobody"} {
		if u, err = user.Lookup(name); err == nil {
			break
		}
	}
	if err != nil {
		return nil, fmt.Errorf("running as root and no postgres or nobody user to run PostgreSQL as: %w", err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	if err := os.Chown(dir, uid, gid); err != nil {
		return nil, err
	}
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, nil
}

func freePort(t testing.TB) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}
