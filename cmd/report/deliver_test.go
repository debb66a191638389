package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/billsync/billsync/internal/cli"
	"github.com/billsync/billsync/internal/cli/clitest"
	"github.com/sethvargo/go-envconfig"
)

// TestDeliverExitStatus: report deliver's mistakes of use or settings exit 2 with the file's
// line, a failure at send time exits 1, and the journal lists nothing before anything ran.
func TestDeliverExitStatus(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "deliveries.yaml")
	os.WriteFile(good, []byte("deliveries:\n  - name: daily\n    reports: [aging]\n    schedule: \"0 7 * * *\"\n    as_of: yesterday\n    to: [finance@example.com]\n"), 0o644)
	bad := filepath.Join(dir, "bad.yaml")
	os.WriteFile(bad, []byte("deliveries:\n  - name: daily\n    reports: [aging]\n    schedule: \"0 7 * * *\"\n    as_of: last friday\n    to: [finance@example.com]\n    colour: red\n"), 0o644)
	db := filepath.Join(dir, "none", "w.duckdb")
	pwFile := filepath.Join(dir, "pw")
	os.WriteFile(pwFile, []byte("relay-pass\n"), 0o600)
	env := map[string]string{"BILLSYNC_DELIVERIES": good, "BILLSYNC_DB": db, "BILLSYNC_OUTBOX": filepath.Join(dir, "outbox"),
		"BILLSYNC_REPORTS_OUT": filepath.Join(dir, "out")}
	with := func(k, v string) map[string]string {
		m := map[string]string{}
		for a, b := range env {
			m[a] = b
		}
		m[k] = v
		return m
	}
	for _, tc := range []struct {
		args   []string
		env    map[string]string
		code   int
		stdout string
		stderr string
	}{
		{[]string{"deliver", "-h"}, env, 0, "usage: report deliver NAME", ""},
		{[]string{"deliver"}, env, 2, "", "want one delivery name"},
		{[]string{"deliver", "weekly"}, env, 2, "", `no delivery "weekly" (declared: daily)`},
		{[]string{"deliver", "daily"}, with("BILLSYNC_DELIVERIES", ""), 2, "", "BILLSYNC_DELIVERIES (-deliveries) is not set"},
		{[]string{"deliver", "daily"}, with("BILLSYNC_DELIVERIES", bad), 2, "", "bad.yaml:5: as_of \"last friday\""},
		{[]string{"deliver", "daily"}, with("BILLSYNC_DELIVERIES", bad), 2, "", "bad.yaml:7: unknown field \"colour\""},
		{[]string{"deliver", "-as-of", "31/10/2026", "daily"}, env, 2, "", "-as-of \"31/10/2026\""},
		{[]string{"deliver", "-dry-run", "-again", "daily"}, env, 2, "", "-again goes without it"},
		{[]string{"deliver", "daily"}, with("BILLSYNC_SMTP_URL", "smtp://bot@127.0.0.1:1"), 2, "", "set BILLSYNC_SMTP_PASSWORD_FILE"},
		{[]string{"deliver", "-smtp-password-file", filepath.Join(dir, "nope"), "daily"}, with("BILLSYNC_SMTP_URL", "smtp://bot@127.0.0.1:1"), 2, "", "BILLSYNC_SMTP_PASSWORD_FILE"},
		{[]string{"deliver", "daily"}, with("BILLSYNC_MAIL_FROM", "billsync"), 2, "", "BILLSYNC_MAIL_FROM"},
		// BILLSYNC_SMTP_TLS: a contradiction with the URL, a password over plain text to another host.
		{[]string{"deliver", "-smtp-tls", "tls", "daily"}, with("BILLSYNC_SMTP_URL", "smtp://relay.internal"), 2, "", "BILLSYNC_SMTP_TLS=tls contradicts BILLSYNC_SMTP_URL's smtp://"},
		{[]string{"deliver", "-smtp-tls", "none", "daily"}, with("BILLSYNC_SMTP_URL", "smtps://relay.internal"), 2, "", "BILLSYNC_SMTP_TLS=none contradicts"},
		{[]string{"deliver", "-smtp-tls", "none", "-smtp-password-file", pwFile, "daily"}, with("BILLSYNC_SMTP_URL", "smtp://bot@relay.internal"), 2, "",
			"the password would cross the network to relay.internal in plain text"},
		{[]string{"deliver", "-smtp-tls", "none", "daily"}, with("BILLSYNC_SMTP_URL", "smtp://relay.internal"), 1, "",
			"BILLSYNC_SMTP_TLS=none: messages go to the SMTP server WITHOUT TLS"},
		{[]string{"deliver", "-test-to", "tester", "daily"}, env, 2, "", "-test-to"},
		{[]string{"deliver", "-test-to", "a@toko.example", "-again", "daily"}, env, 2, "", "-test-to sends a test whatever the journal says"},
		{[]string{"deliver", "daily"}, env, 1, "", "does not exist yet"},
		{[]string{"deliveries"}, with("BILLSYNC_DB", filepath.Join(dir, "w2.duckdb")), 0, "no deliveries in", ""},
	} {
		var stdout, stderr bytes.Buffer
		err := run(context.Background(), tc.args, envconfig.MapLookuper(tc.env), strings.NewReader(""), &stdout, &stderr)
		code := cli.Exit("report", err, &stdout, &stderr)
		if code != tc.code || !strings.Contains(stdout.String(), tc.stdout) || !strings.Contains(stderr.String(), tc.stderr) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want %d, %q, %q", tc.args, code, stdout.String(), stderr.String(), tc.code, tc.stdout, tc.stderr)
		}
	}
	// The failure at send time is journaled.
	var stdout, stderr bytes.Buffer
	if err := run(context.Background(), []string{"deliveries"}, envconfig.MapLookuper(env), strings.NewReader(""), &stdout, &stderr); err != nil ||
		!strings.Contains(stdout.String(), "failed") || !strings.Contains(stdout.String(), "does not exist yet") {
		t.Errorf("deliveries: %v\n%s", err, stdout.String())
	}
}

// TestDeliveriesInTheZone: report deliveries prints each time in BILLSYNC_TZ with its zone
// named, as the schedule ("0 7 * * *" is 07:00 WIB) and the messages say them: no time a
// person cannot place, none in UTC.
func TestDeliveriesInTheZone(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "deliveries.yaml")
	os.WriteFile(file, []byte("deliveries:\n  - name: daily\n    reports: [aging]\n    schedule: \"0 7 * * *\"\n    as_of: yesterday\n    to: [finance@example.com]\n"), 0o644)
	env := envconfig.MapLookuper(map[string]string{"BILLSYNC_DELIVERIES": file, "BILLSYNC_DB": filepath.Join(dir, "none", "w.duckdb"),
		"BILLSYNC_OUTBOX": filepath.Join(dir, "outbox"), "BILLSYNC_REPORTS_OUT": filepath.Join(dir, "out"), "BILLSYNC_TZ": "Asia/Jakarta"})
	var stdout, stderr bytes.Buffer
	// No warehouse yet: the attempt fails and is journaled, with the time it started.
	if code := cli.Exit("report", run(context.Background(), []string{"deliver", "daily"}, env, strings.NewReader(""), &stdout, &stderr), &stdout, &stderr); code != 1 {
		t.Fatalf("deliver: exit %d\n%s%s", code, stdout.String(), stderr.String())
	}
	stdout.Reset()
	if err := run(context.Background(), []string{"deliveries"}, env, strings.NewReader(""), &stdout, &stderr); err != nil {
		t.Fatal(err)
	}
	jkt, _ := time.LoadLocation("Asia/Jakarta")
	out := stdout.String()
	if !strings.Contains(out, " WIB ") {
		t.Errorf("report deliveries names no zone:\n%s", out)
	}
	if bad := clitest.Unzoned(out, jkt, time.Now()); len(bad) > 0 {
		t.Errorf("report deliveries prints %q, times a person cannot place on the WIB clock:\n%s", bad, out)
	}
	// The log's times too.
	if bad := clitest.Unzoned(stderr.String(), jkt, time.Now()); len(bad) > 0 {
		t.Errorf("report deliver logs %q:\n%s", bad, stderr.String())
	}
}
