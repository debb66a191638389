package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

const recordKey = "sk-live-4c1b9e2f7a6d3058-payments"

// TestRedactRecord: the key, or any run of 8 or more of its characters, in a member's value or
// name, plain or spelled with JSON escapes, is replaced by [redacted]; the record stays valid
// JSON and says which members held it. Shorter runs and records without the key are kept as they
// are, byte for byte.
func TestRedactRecord(t *testing.T) {
	s := newKeyScreen(recordKey)
	tests := []struct {
		name, rec, want string
		fields          []string
	}{
		{"the whole key in a name", `{"id":"c1","name":"Budi ` + recordKey + `"}`, `{"id":"c1","name":"Budi [redacted]"}`, []string{"name"}},
		{"8 characters of it inside a note", `{"id":"c2","note":"ref 4c1b9e2f ok"}`, `{"id":"c2","note":"ref [redacted] ok"}`, []string{"note"}},
		{"7 characters are kept", `{"id":"c3","note":"ref 4c1b9e2 ok"}`, `{"id":"c3","note":"ref 4c1b9e2 ok"}`, nil},
		{"spelled with \\u escapes", `{"id":"c4","name":"\u0073k-live-4c1b9e2f7a6d3058\u002dpayments"}`, `{"id":"c4","name":"[redacted]"}`, []string{"name"}},
		{"escaped slashes around it", `{"id":"c5","url":"https:\/\/x.example\/?k=` + recordKey + `"}`, `{"id":"c5","url":"https://x.example/?k=[redacted]"}`, []string{"url"}},
		{"as a member's name, nested", `{"id":"c6","extra":{"` + recordKey + `":1}}`, `{"id":"c6","extra":{"[redacted]":1}}`, []string{"[redacted]"}},
		{"twice, in two members", `{"id":"c7","name":"` + recordKey[:12] + `","email":"` + recordKey[10:] + `@x.id"}`,
			`{"id":"c7","name":"[redacted]","email":"[redacted]@x.id"}`, []string{"name", "email"}},
		{"none", `{"id":"c8","name":"Siti Rahayu","email":"siti@toko.id"}`, `{"id":"c8","name":"Siti Rahayu","email":"siti@toko.id"}`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			items := []json.RawMessage{json.RawMessage(tt.rec)}
			red := s.redactItems([]byte(tt.rec), items)
			if got := string(items[0]); got != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
			if !json.Valid(items[0]) {
				t.Errorf("not valid JSON: %s", items[0])
			}
			if tt.fields == nil {
				if red != nil {
					t.Errorf("redactions %+v, want none", red)
				}
				return
			}
			if len(red) != 1 || red[0].Item != 0 || strings.Join(red[0].Fields, ",") != strings.Join(tt.fields, ",") || red[0].ID == "" {
				t.Errorf("redactions %+v, want item 0 with fields %v and its id", red, tt.fields)
			}
		})
	}
}

// TestCheckUTF8: a record with bytes that are not UTF-8 is named by its item, id and field, with
// the encoding as the cause; the record's id may be a number or missing.
func TestCheckUTF8(t *testing.T) {
	tests := []struct{ rec, want string }{
		{`{"id":"c1","name":"Jos` + "\xe9" + `"}`, `item 0 (id "c1"): the text in "name" is not UTF-8 (byte 0xe9 at byte 22 of the record)`},
		{`{"id":42,"address":{"city":"Bandung ` + "\x80" + `"}}`, `item 0 (id "42"): the text in "city" is not UTF-8 (byte 0x80`},
		{`{"name":"` + "\xff" + `"}`, `item 0 (no id found): the text in "name" is not UTF-8 (byte 0xff at byte 9`},
	}
	for _, tt := range tests {
		body := []byte(`{"data":[` + tt.rec + `]}`)
		err := checkUTF8(body, []json.RawMessage{json.RawMessage(tt.rec)}, false)
		var enc *EncodingError
		if !errors.As(err, &enc) || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), "another encoding") {
			t.Errorf("%q: %v\nwant %s", tt.rec, err, tt.want)
		}
	}
	if err := checkUTF8([]byte(`{"data":[{"id":"c1","name":"José"}]}`), []json.RawMessage{json.RawMessage(`{"id":"c1","name":"José"}`)}, false); err != nil {
		t.Errorf("valid UTF-8: %v", err)
	}
}

// BenchmarkKeyScreen is what every list page pays for the key's redaction when no record holds
// it: one screening pass over the body (compare BenchmarkDecodeListPage on the same page), with
// a key like the service's (a JWT) and one sharing words with the records' text.
func BenchmarkKeyScreen(b *testing.B) {
	page := hundredInvoices(b)
	p, err := decodeList(page, 200, (*header).standardPage)
	if err != nil {
		b.Fatal(err)
	}
	for _, k := range []struct{ name, key string }{
		{"jwt", "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJpZCI6IjVmZDQ3ZTI3LWE5ZjMtNDFhZC1iZWM2LTg0MmI2YmE0MjkzZiIsImFjY291bnRJZCI6IjZiOTRmNTliLTM0YmUtNDlkNy1hNWRhLTVkNTZhMzE0OGFjZSJ9.q3Xv1kH8sT6w0yZbC9mR2pL5nD7fJ4gA1eU0iO8xY2c"},
		{"words", recordKey},
		{"short", "bench-key"}, // syncbench's
	} {
		b.Run(k.name, func(b *testing.B) {
			s := newKeyScreen(k.key)
			b.SetBytes(int64(len(page)))
			for b.Loop() {
				if red := s.redactItems(page, p.Items); red != nil {
					b.Fatal(red)
				}
			}
			b.ReportMetric(float64(b.N)*100/b.Elapsed().Seconds(), "items/s")
		})
	}
}

// BenchmarkScanCalibration is one plain pass over the page (bytes.Count of a byte), to read the
// others against on a machine whose speed varies with its load.
func BenchmarkScanCalibration(b *testing.B) {
	page := hundredInvoices(b)
	b.SetBytes(int64(len(page)))
	for b.Loop() {
		if bytes.Count(page, []byte{0}) != 0 {
			b.Fatal("a zero byte")
		}
	}
}

// BenchmarkCheckUTF8 is the UTF-8 check of a valid page: one pass over the body.
func BenchmarkCheckUTF8(b *testing.B) {
	page := hundredInvoices(b)
	b.SetBytes(int64(len(page)))
	for b.Loop() {
		if err := checkUTF8(page, nil, false); err != nil {
			b.Fatal(err)
		}
	}
}

// TestRedactShortKey: a key shorter than 16 characters is only redacted whole (its runs of 8 are
// too common to tell from text), wherever it stands; one of fewer than 8 characters too.
func TestRedactShortKey(t *testing.T) {
	for _, key := range []string{"bench-key", "k3y-0123456", "abc"} {
		s := newKeyScreen(key)
		for _, tt := range []struct{ rec, want string }{
			{`{"id":"a","name":"x` + key + `y ` + key + `"}`, `{"id":"a","name":"x[redacted]y [redacted]"}`},
			{`{"id":"b","name":"` + key[:len(key)-1] + `"}`, `{"id":"b","name":"` + key[:len(key)-1] + `"}`},
		} {
			items := []json.RawMessage{json.RawMessage(tt.rec)}
			s.redactItems([]byte(tt.rec), items)
			if string(items[0]) != tt.want {
				t.Errorf("key %q: got %s, want %s", key, items[0], tt.want)
			}
		}
	}
}
