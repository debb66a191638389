package delivery

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha1"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"log/slog"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/billsync/billsync/internal/api"
	"github.com/billsync/billsync/internal/config"
	"github.com/billsync/billsync/internal/fetch"
	"github.com/billsync/billsync/internal/sandbox"
	"github.com/billsync/billsync/internal/syncrun"
)

const testKey = "sk-delivery-test-5e2b-secret"

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// The simulator's clock: the sync runs at 07:00 of 2026-06-02 in Jakarta.
var syncAt = time.Date(2026, 6, 2, 0, 0, 0, 0, time.UTC)

var (
	worldOnce sync.Once
	worldDB   string
	worldErr  error
)

// testWarehouse is a copy, in the test's directory, of a warehouse synced once from the
// simulator (built once per test binary).
func testWarehouse(t *testing.T) string {
	t.Helper()
	worldOnce.Do(func() {
		dir, err := os.MkdirTemp("", "delivery-world-")
		if err != nil {
			worldErr = err
			return
		}
		worldDB = filepath.Join(dir, "billsync.duckdb")
		sb, err := sandbox.New(sandbox.Options{Seed: 7, Scale: 0.2, Now: syncAt, Key: testKey})
		if err != nil {
			worldErr = err
			return
		}
		srv := httptest.NewServer(sb)
		defer srv.Close()
		client, err := api.New(api.Config{BaseURL: srv.URL, APIKey: testKey, Unlimited: true,
			MinBackoff: time.Millisecond, MaxBackoff: 20 * time.Millisecond, Logger: quiet})
		if err != nil {
			worldErr = err
			return
		}
		_, worldErr = syncrun.Run(context.Background(), worldDB, []syncrun.Account{{Name: "main", Client: client}},
			syncrun.Options{Options: fetch.Options{Fetch: config.Fetch{PageSize: 100, Concurrency: 4, Details: true}, Account: "main", Log: quiet}})
	})
	if worldErr != nil {
		t.Fatal(worldErr)
	}
	dir := t.TempDir()
	db := filepath.Join(dir, "data", "billsync.duckdb")
	os.MkdirAll(filepath.Dir(db), 0o755)
	b, err := os.ReadFile(worldDB)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(db, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return db
}

func TestMain(m *testing.M) {
	if kind := os.Getenv(childEnv); kind != "" {
		os.Exit(childMain(kind))
	}
	if os.Getenv(alertChildEnv) != "" {
		os.Exit(alertChild())
	}
	code := m.Run()
	if worldDB != "" {
		os.RemoveAll(filepath.Dir(worldDB))
	}
	os.Exit(code)
}

// mailpit is a real SMTP server started for a test, read through its HTTP API.
type mailpit struct {
	smtpPort int
	api      string
	roots    *x509.CertPool
	bin      string
	args     []string
	cmd      *exec.Cmd
}

// mailpitBinary finds mailpit: on PATH or in GOPATH/bin (.ci/run installs it). Without it the
// test is skipped, except in CI (BILLSYNC_CI=1), where it fails.
func mailpitBinary(t *testing.T) string {
	t.Helper()
	if p, err := exec.LookPath("mailpit"); err == nil {
		return p
	}
	if out, err := exec.Command("go", "env", "GOPATH").Output(); err == nil {
		p := filepath.Join(string(trimNL(out)), "bin", "mailpit")
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	msg := "mailpit not found: go install github.com/axllent/mailpit@v1.33.1 (.ci/run does)"
	if os.Getenv("BILLSYNC_CI") == "1" {
		t.Fatal(msg)
	}
	t.Skip(msg)
	return ""
}

func trimNL(b []byte) []byte {
	for len(b) > 0 && (b[len(b)-1] == '\n' || b[len(b)-1] == '\r') {
		b = b[:len(b)-1]
	}
	return b
}

// freePorts are n distinct free ports, held open together while they are chosen.
func freePorts(t *testing.T, n int) []int {
	t.Helper()
	var ports []int
	for range n {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		ports = append(ports, ln.Addr().(*net.TCPAddr).Port)
	}
	return ports
}

// startMailpit starts mailpit with a self-signed certificate for 127.0.0.1 and one SMTP user
// (user, password): STARTTLS required, or implicit TLS when implicit is set.
func startMailpit(t *testing.T, user, password string, implicit bool) *mailpit {
	t.Helper()
	mode := "starttls"
	if implicit {
		mode = "tls"
	}
	return startMailpitTLS(t, user, password, mode)
}

// startMailpitTLS starts mailpit speaking tls (TLS from the first byte), starttls (required)
// or none (no certificate: no STARTTLS offered); with a user, AUTH is offered and required,
// without one no AUTH is offered.
func startMailpitTLS(t *testing.T, user, password, tlsMode string) *mailpit {
	t.Helper()
	bin := mailpitBinary(t)
	dir := t.TempDir()
	certFile, keyFile, roots := selfSigned(t, dir)
	ports := freePorts(t, 2)
	m := &mailpit{smtpPort: ports[0], roots: roots}
	httpPort := ports[1]
	m.api = fmt.Sprintf("http://127.0.0.1:%d", httpPort)
	args := []string{"--listen", fmt.Sprintf("127.0.0.1:%d", httpPort), "--smtp", fmt.Sprintf("127.0.0.1:%d", m.smtpPort),
		"--database", filepath.Join(dir, "mailpit.db"), "--smtp-disable-rdns", "--quiet"}
	if user != "" {
		sum := sha1.Sum([]byte(password))
		auth := filepath.Join(dir, "smtp-users")
		if err := os.WriteFile(auth, []byte(user+":{SHA}"+base64.StdEncoding.EncodeToString(sum[:])+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		args = append(args, "--smtp-auth-file", auth)
		if tlsMode == "none" {
			args = append(args, "--smtp-auth-allow-insecure")
		}
	}
	switch tlsMode {
	case "starttls":
		args = append(args, "--smtp-tls-cert", certFile, "--smtp-tls-key", keyFile, "--smtp-require-starttls")
	case "tls":
		args = append(args, "--smtp-tls-cert", certFile, "--smtp-tls-key", keyFile, "--smtp-require-tls")
	}
	m.bin, m.args = bin, args
	t.Cleanup(m.stop)
	m.start(t)
	return m
}

// stop ends the server: its messages stay in its database file for the next start.
func (m *mailpit) stop() {
	if m.cmd != nil {
		m.cmd.Process.Kill()
		m.cmd.Wait()
		m.cmd = nil
	}
}

// start runs the server (again, on the same ports and database) and waits until it answers.
func (m *mailpit) start(t *testing.T) {
	t.Helper()
	cmd := exec.Command(m.bin, m.args...)
	cmd.Stdout, cmd.Stderr = nil, nil // not the test's output: a server left running would hold go test open
	// It dies with the test binary, even when a test times out and no cleanup runs.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	m.cmd = cmd
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get(m.api + "/api/v1/messages")
		if err == nil {
			resp.Body.Close()
			if c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", m.smtpPort)); err == nil {
				c.Close()
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("mailpit did not start: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// smtp is the server as billsync is configured for it.
func (m *mailpit) smtp(user, password string, implicit bool) *SMTP {
	return &SMTP{Implicit: implicit, Host: "127.0.0.1", Port: m.smtpPort, User: user, Password: password,
		TLS: &tls.Config{RootCAs: m.roots, ServerName: "127.0.0.1", MinVersion: tls.VersionTLS12}}
}

type mpAddress struct{ Name, Address string }

type mpSummary struct {
	ID, MessageID, Subject string
	To, Cc                 []mpAddress
}

type mpMessage struct {
	ID, MessageID, Subject, Text, HTML string
	From                               mpAddress
	To, Cc                             []mpAddress
	Attachments                        []struct {
		PartID, FileName, ContentType string
		Size                          int64
	}
}

func (m *mailpit) get(t *testing.T, path string, into any) []byte {
	t.Helper()
	resp, err := http.Get(m.api + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("GET %s: %d %v %s", path, resp.StatusCode, err, b)
	}
	if into != nil {
		if err := json.Unmarshal(b, into); err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
	}
	return b
}

// messages are the messages that arrived, newest first.
func (m *mailpit) messages(t *testing.T) []mpSummary {
	var list struct{ Messages []mpSummary }
	m.get(t, "/api/v1/messages", &list)
	return list.Messages
}

func (m *mailpit) message(t *testing.T, id string) mpMessage {
	var msg mpMessage
	m.get(t, "/api/v1/message/"+id, &msg)
	return msg
}

// selfSigned writes a certificate for 127.0.0.1 and localhost and its key, and returns a pool
// that trusts it.
func selfSigned(t *testing.T, dir string) (certFile, keyFile string, roots *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "billsync test SMTP"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign, IsCA: true, BasicConstraintsValid: true,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, DNSNames: []string{"localhost"},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kb, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600)
	os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), 0o600)
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	roots = x509.NewCertPool()
	roots.AddCert(cert)
	return certFile, keyFile, roots
}

// testOptions are Options for a test's warehouse, messages into the test's outbox.
func testOptions(t *testing.T, db string) Options {
	t.Helper()
	dir := filepath.Dir(filepath.Dir(db))
	rep := config.Defaults[config.Report]() // report's settings as an unset environment gives them
	rep.ReportsOut = filepath.Join(dir, "out")
	return Options{Report: rep, DB: db, Outbox: filepath.Join(dir, "out", "outbox"),
		From: "billsync@toko.example", Log: quiet, Retries: 0, Backoff: time.Millisecond}
}

// testDelivery parses one delivery of a schedule file's text.
func testDelivery(t *testing.T, text string) *Delivery {
	t.Helper()
	loc, err := time.LoadLocation("Asia/Jakarta")
	if err != nil {
		t.Fatal(err)
	}
	f, err := Parse("test.yaml", []byte(text), loc)
	if err != nil {
		t.Fatal(err)
	}
	return f.Deliveries[0]
}
