package jobs

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"

	"golang.org/x/text/encoding/charmap"
	"golang.org/x/text/encoding/unicode"
	"golang.org/x/text/transform"
)

// A CSV comes in whatever encoding the spreadsheet saved it in. UTF-8 (with or without the
// byte-order mark Excel's "CSV UTF-8" writes) is read as it is; UTF-16 with its byte-order mark
// (Excel's "Unicode Text", tab-separated) is decoded; anything else, Windows-1252 from a plain
// "CSV (Comma delimited)" save above all, is refused at the first line that is not UTF-8, with
// what it would say in Windows-1252 and how to save the file instead. Guessing an 8-bit code page
// would put a wrong letter in a customer's name or e-mail without anyone seeing it.

const saveAsUTF8 = `save it in Excel as "CSV UTF-8 (Comma delimited) (*.csv)" (File > Save As) and plan it again`

// countingReader counts the bytes read from the file, for the size cap while reading: the file may
// grow after its size was checked.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// decodeText gives the file's text as UTF-8, by its byte-order mark; a file that cannot be
// UTF-8 or UTF-16 with a mark is refused here.
func decodeText(path string, r io.Reader) (io.Reader, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	head, _ := br.Peek(4)
	refuse := func(what string) error {
		return InputErrors{{File: path, Line: 1, Msg: what + ": " + saveAsUTF8}}
	}
	switch {
	case bytes.HasPrefix(head, []byte{0xff, 0xfe, 0, 0}), bytes.HasPrefix(head, []byte{0, 0, 0xfe, 0xff}):
		return nil, refuse("the file is UTF-32 text, which billsync does not read")
	case bytes.HasPrefix(head, []byte{0xef, 0xbb, 0xbf}):
		_, _ = br.Discard(3)
		return br, nil
	case bytes.HasPrefix(head, []byte{0xff, 0xfe}):
		return transform.NewReader(br, unicode.UTF16(unicode.LittleEndian, unicode.ExpectBOM).NewDecoder()), nil
	case bytes.HasPrefix(head, []byte{0xfe, 0xff}):
		return transform.NewReader(br, unicode.UTF16(unicode.BigEndian, unicode.ExpectBOM).NewDecoder()), nil
	}
	start, _ := br.Peek(4 << 10)
	if i := bytes.IndexByte(start, 0); i >= 0 {
		return nil, InputErrors{{File: path, Line: 1 + bytes.Count(start[:i], []byte("\n")),
			Msg: "the file holds NUL bytes: it is UTF-16 text without its byte-order mark, or not text at all; " + saveAsUTF8}}
	}
	return br, nil
}

// readCSV streams a CSV (or tab-separated text) against the caps: the row cap at the row over it,
// the size cap as the bytes are read.
func readCSV(path string, r io.Reader) (*table, error) {
	raw := &countingReader{r: r}
	text, err := decodeText(path, raw)
	if err != nil {
		return nil, err
	}
	br := bufio.NewReaderSize(text, 64<<10)
	first, _ := br.Peek(64 << 10)
	cr := csv.NewReader(br)
	cr.Comma = sniffDelimiter(first)
	cr.FieldsPerRecord = -1
	t := &table{file: path}
	for {
		rec, err := cr.Read()
		if raw.n > MaxInputBytes { // it grew after its size was checked
			return nil, InputErrors{{File: path, Msg: fmt.Sprintf("the file is more than the %s a job file may have: split it",
				byteSize(MaxInputBytes))}}
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			var pe *csv.ParseError
			if errors.As(err, &pe) {
				return nil, InputErrors{{File: path, Line: pe.Line,
					Msg: fmt.Sprintf("malformed CSV at character %d: %v", pe.Column, pe.Err)}}
			}
			return nil, fmt.Errorf("read %s: %w", path, err)
		}
		line, _ := cr.FieldPos(0)
		if err := checkFields(t, rec, cr); err != nil {
			return nil, err
		}
		if t.header == nil {
			t.header = rec
			continue
		}
		if len(t.rows) == MaxInputRows {
			return nil, tooManyRows(t, line)
		}
		t.rows = append(t.rows, inputRow{line: line, cells: undoCellsafe(rec)})
	}
	if t.header == nil {
		return nil, InputErrors{{File: path, Line: 1, Msg: "the file is empty: a header row is required"}}
	}
	return t, nil
}

// checkFields refuses a record with a field that is not UTF-8, longer than a spreadsheet cell, or
// beyond the columns a job file may have, naming the line and column.
func checkFields(t *table, rec []string, cr *csv.Reader) error {
	fail := func(i int, msg string) error {
		line, _ := cr.FieldPos(i)
		return InputErrors{{File: t.file, Line: line, Column: columnLabel(t.header, i), Msg: msg}}
	}
	for i, f := range rec {
		if !utf8.ValidString(f) {
			return fail(i, notUTF8(f))
		}
		if len(f) > maxCellChars && utf8.RuneCountInString(f) > maxCellChars {
			return fail(i, fmt.Sprintf("the value holds more than the %d characters a spreadsheet cell may have", maxCellChars))
		}
		if i >= MaxInputColumns && strings.TrimSpace(f) != "" {
			return fail(i, fmt.Sprintf("a value beyond the %d columns a job file may have: take it out of the file", MaxInputColumns))
		}
	}
	return nil
}

// columnLabel is "C (amount)": the column's letter and, once the header is read, its name.
func columnLabel(header []string, i int) string {
	if i < len(header) && header[i] != "" {
		return colName(i) + " (" + strings.TrimSpace(header[i]) + ")"
	}
	return colName(i)
}

// notUTF8 says a value is not UTF-8 and what it reads as in Windows-1252, the encoding a plain CSV save
// from Excel on Windows uses, without putting the raw bytes on a terminal.
func notUTF8(v string) string {
	as1252, err := charmap.Windows1252.NewDecoder().String(v)
	if err != nil {
		as1252 = strings.ToValidUTF8(v, "\ufffd")
	}
	if r := []rune(as1252); len(r) > 60 {
		as1252 = string(r[:60]) + "…"
	}
	return fmt.Sprintf("not UTF-8 text (the file was saved in another encoding, such as Windows-1252, in which this value reads %s): %s",
		strconv.Quote(as1252), saveAsUTF8)
}

// sniffDelimiter picks ; or tab over , when the header line has more of them: spreadsheets saved in
// locales with a decimal comma write semicolons, and Excel's "Unicode Text" tabs.
func sniffDelimiter(b []byte) rune {
	first, _, _ := bytes.Cut(b, []byte("\n"))
	best, n := ',', bytes.Count(first, []byte(","))
	for _, d := range []rune{';', '\t'} {
		if c := bytes.Count(first, []byte(string(d))); c > n {
			best, n = d, c
		}
	}
	return best
}
