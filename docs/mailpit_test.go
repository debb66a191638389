package docs

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha1"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// docs/delivery.md's e-mail block sends through a real SMTP server: mailpit, started here with
// STARTTLS required and a user with a password, as internal/delivery's tests start it. The
// blocks see it as SMTP_SERVER (host:port) and SMTP_PASSWORD_FILE, and trust its certificate
// through SSL_CERT_FILE, as a reader's billsync trusts their provider's.
const (
	mailUser     = "billing@yourcompany.co.id"
	mailPassword = "docs-app-password-4711"
	mailVar      = "SMTP_SERVER" // a block naming it needs mailpit
)

// docsMailpit is the running server: its HTTP API and the environment the blocks get.
type docsMailpit struct {
	api string
	env []string
}

// mailpitPath finds mailpit on PATH or in GOPATH/bin (.ci/run installs it); "" without it.
func mailpitPath() string {
	if p, err := exec.LookPath("mailpit"); err == nil {
		return p
	}
	if out, err := exec.Command("go", "env", "GOPATH").Output(); err == nil {
		p := filepath.Join(strings.TrimSpace(string(out)), "bin", "mailpit")
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	return ""
}

// startDocsMailpit starts mailpit for the blocks; nil when it is not installed, except in CI
// (BILLSYNC_CI=1), where that fails the test.
func startDocsMailpit(t *testing.T) *docsMailpit {
	t.Helper()
	bin := mailpitPath()
	if bin == "" {
		if os.Getenv("BILLSYNC_CI") == "1" {
			t.Fatal("mailpit not found: go install github.com/axllent/mailpit@v1.33.1 (.ci/run does)")
		}
		return nil
	}
	dir := t.TempDir()
	cert, key := docsCert(t, dir)
	sum := sha1.Sum([]byte(mailPassword))
	auth := filepath.Join(dir, "smtp-users")
	pw := filepath.Join(dir, "smtp-password")
	if err := os.WriteFile(auth, []byte(mailUser+":{SHA}"+base64.StdEncoding.EncodeToString(sum[:])+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(pw, []byte(mailPassword+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ports := freePorts(t, 2)
	smtpAddr, httpAddr := fmt.Sprintf("127.0.0.1:%d", ports[0]), fmt.Sprintf("127.0.0.1:%d", ports[1])
	cmd := exec.Command(bin, "--listen", httpAddr, "--smtp", smtpAddr, "--database", filepath.Join(dir, "mailpit.db"),
		"--smtp-auth-file", auth, "--smtp-tls-cert", cert, "--smtp-tls-key", key, "--smtp-require-starttls",
		"--smtp-disable-rdns", "--quiet")
	cmd.Stdout, cmd.Stderr = nil, nil // not the test's output: a server left running would hold go test open
	// It dies with the test binary, even when a test times out and no cleanup runs.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	m := &docsMailpit{api: "http://" + httpAddr,
		env: []string{mailVar + "=" + smtpAddr, "SMTP_PASSWORD_FILE=" + pw, "SSL_CERT_FILE=" + cert}}
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get(m.api + "/api/v1/messages")
		if err == nil {
			resp.Body.Close()
			if c, err := net.Dial("tcp", smtpAddr); err == nil {
				c.Close()
				return m
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("mailpit did not start: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
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

// subjects are the subjects of the messages that arrived.
func (m *docsMailpit) subjects(t *testing.T) []string {
	t.Helper()
	resp, err := http.Get(m.api + "/api/v1/messages")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var list struct{ Messages []struct{ Subject string } }
	if err := json.NewDecoder(resp.Body).Decode(&list); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, msg := range list.Messages {
		out = append(out, msg.Subject)
	}
	return out
}

// docsCert writes a self-signed certificate for 127.0.0.1 and its key.
func docsCert(t *testing.T, dir string) (certFile, keyFile string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "billsync docs test SMTP"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign, IsCA: true, BasicConstraintsValid: true,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
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
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), 0o600); err != nil {
		t.Fatal(err)
	}
	return certFile, keyFile
}
