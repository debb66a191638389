package jobs_test

import (
	"bytes"
	"compress/flate"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf16"

	"github.com/billsync/billsync/internal/jobs"
)

// utf16File writes lines as UTF-16 with its byte-order mark, CRLF line ends, as Excel's "Unicode Text" does.
func utf16File(t *testing.T, path string, bigEndian bool, lines ...string) string {
	t.Helper()
	var b bytes.Buffer
	put := func(u uint16) {
		if bigEndian {
			b.WriteByte(byte(u >> 8))
			b.WriteByte(byte(u))
		} else {
			b.WriteByte(byte(u))
			b.WriteByte(byte(u >> 8))
		}
	}
	put(0xfeff)
	for _, u := range utf16.Encode([]rune(strings.Join(lines, "\r\n") + "\r\n")) {
		put(u)
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestJobFileEncodings: a CSV is read in the encoding its byte-order mark names (UTF-8 with or without
// it, UTF-16 LE or BE: Excel's "Unicode Text", tab-separated) and planned alike; one in any other
// encoding (Windows-1252 above all, UTF-16 without its mark, UTF-32) is refused at its first line that
// is not UTF-8, naming file, line and column, what the value reads as and how to save the file instead,
// with no raw bytes in the message, no plan stored and nothing sent.
func TestJobFileEncodings(t *testing.T) {
	e := newEnv(t)
	cs := e.customers(2)
	p := e.product(creditUsage)
	rows := []string{cs[0].ID + "," + p.ID + ",5000", cs[1].ID + "," + p.ID + ",7000"}
	tabbed := func(lines []string) []string {
		var out []string
		for _, l := range lines {
			out = append(out, strings.ReplaceAll(l, ",", "\t"))
		}
		return out
	}
	header := "customerId,productId,amount"
	good := []struct{ name, file string }{
		{"UTF-8", e.file("utf8.csv", append([]string{header}, rows...)...)},
		{"UTF-8 with BOM", e.file("bom.csv", append([]string{"\ufeff" + header}, rows...)...)},
		{"UTF-16 LE tab-separated (Excel's Unicode Text)", utf16File(t, filepath.Join(e.dir, "unicode.txt"), false,
			tabbed(append([]string{header}, rows...))...)},
		{"UTF-16 BE", utf16File(t, filepath.Join(e.dir, "be.csv"), true, append([]string{header}, rows...)...)},
	}
	for _, tc := range good {
		t.Run(tc.name, func(t *testing.T) {
			plan, err := e.plan(jobs.CreditTopup, tc.file)
			if err != nil {
				t.Fatal(err)
			}
			if len(plan.Actions) != 2 || plan.Actions[0].Request["amount"] != "5000" || plan.Actions[1].Line != 3 {
				t.Fatalf("planned %d actions: %+v", len(plan.Actions), plan.Actions)
			}
		})
	}
	j := e.open()
	stored, err := j.Plans(t.Context())
	j.Close()
	if err != nil {
		t.Fatal(err)
	}

	// An invoice file saved as plain "CSV (Comma delimited)" on Windows: é is the byte E9.
	invoices := "name,email,mobile,redirectUrl,description,expiredAt,rate\n" +
		"Budi Hartono,budi.h@example.com,0812,https://shop.example/thanks,Langganan Desember,2026-12-31,150000\n" +
		"Jos\xe9 Ram\xedrez,jose@example.com,0813,https://shop.example/thanks,Caf\xe9 \x80 bulanan,2026-12-31,90000\n"
	write := func(name string, b []byte) string {
		path := filepath.Join(e.dir, name)
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	var noBOM bytes.Buffer
	for _, r := range header + "\n" + rows[0] + "\n" {
		noBOM.Write([]byte{byte(r), 0})
	}
	wide := header + strings.Repeat(",", jobs.MaxInputColumns) + "x"
	million, _ := jobs.HostileXLSX(t, e.dir, "million.xlsx", "", `<row><c t="inlineStr"><is><t>customerId</t></is></c>`+
		`<c t="inlineStr"><is><t>productId</t></is></c><c t="inlineStr"><is><t>amount</t></is></c></row>`,
		func(w func(string)) {
			row := fmt.Sprintf(`<row><c t="inlineStr"><is><t>%s</t></is></c><c t="inlineStr"><is><t>%s</t></is></c><c><v>5</v></c></row>`, cs[0].ID, p.ID)
			for range 1_000_000 {
				w(row)
			}
		}, "", flate.BestSpeed)
	bad := []struct {
		name string
		kind jobs.Kind
		file string
		want []string
	}{
		{"Windows-1252 invoices", jobs.InvoiceCreate, write("invoices.csv", []byte(invoices)),
			[]string{"line 3 column A (name)", `reads "José Ramírez"`, "CSV UTF-8"}},
		{"a Windows-1252 header", jobs.CreditTopup, write("header.csv", []byte("customerId,productId,amount,cat\xe9gorie\n"+rows[0]+",x\n")),
			[]string{"line 1 column D", `reads "catégorie"`}},
		{"UTF-16 without its byte-order mark", jobs.CreditTopup, write("nobom.csv", noBOM.Bytes()),
			[]string{"line 1", "NUL bytes", "UTF-16 text without its byte-order mark", "CSV UTF-8"}},
		{"UTF-32", jobs.CreditTopup, write("utf32.csv", []byte{0xff, 0xfe, 0, 0, 'a', 0, 0, 0}), []string{"line 1", "UTF-32", "CSV UTF-8"}},
		{"a value in column 259", jobs.CreditTopup, e.file("wide.csv", header, wide), []string{"line 2 column IY", "beyond the 256 columns"}},
		{"a million rows in an xlsx of a megabyte", jobs.CreditTopup, million, []string{`sheet "Sheet1" line 10002`, "more than 10000 data rows"}},
	}
	var golden strings.Builder
	for _, tc := range bad {
		t.Run(tc.name, func(t *testing.T) {
			reqs := e.requests()
			_, err := e.plan(tc.kind, tc.file)
			if err == nil {
				t.Fatal("planned a file it cannot read")
			}
			inputErrors(t, err)
			msg := err.Error()
			for _, w := range append(tc.want, tc.file) {
				if !strings.Contains(msg, w) {
					t.Errorf("the message lacks %q:\n%s", w, msg)
				}
			}
			for _, c := range msg {
				if c == 0xfffd || c < 0x20 && c != '\n' {
					t.Errorf("the message holds %U:\n%q", c, msg)
				}
			}
			if n := e.requests() - reqs; n != 0 {
				t.Errorf("%d requests sent", n)
			}
			fmt.Fprintf(&golden, "== %s\n%s\n", tc.name, strings.ReplaceAll(msg, e.dir, "$DIR"))
		})
	}
	j = e.open()
	defer j.Close()
	if ps, err := j.Plans(t.Context()); err != nil || len(ps) != len(stored) {
		t.Errorf("%d plans stored after the refused files, %d before (%v)", len(ps), len(stored), err)
	}
	checkGolden(t, "encodings.golden", golden.String())
}
