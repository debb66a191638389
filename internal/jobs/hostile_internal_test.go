package jobs

import (
	"archive/zip"
	"bufio"
	"bytes"
	"compress/flate"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// hostileXLSX writes a one-sheet workbook whose sheet XML is head, then what body writes, then
// tail, deflated as it is written (a sheet of a million rows costs the test no memory), with
// shared (the sharedStrings part, "" for none). It returns the path and the sheet XML's size.
func hostileXLSX(t testing.TB, dir, name, shared, head string, body func(write func(string)), tail string, level int) (string, int64) {
	t.Helper()
	p := filepath.Join(dir, name)
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	z := zip.NewWriter(f)
	z.RegisterCompressor(zip.Deflate, func(w io.Writer) (io.WriteCloser, error) {
		return flate.NewWriter(w, level)
	})
	put := func(name, text string) {
		w, err := z.Create(name)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.WriteString(w, text); err != nil {
			t.Fatal(err)
		}
	}
	put("[Content_Types].xml", `<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">`+
		`<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>`+
		`<Default Extension="xml" ContentType="application/xml"/>`+
		`<Override PartName="/xl/workbook.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/>`+
		`<Override PartName="/xl/worksheets/sheet1.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/></Types>`)
	put("_rels/.rels", `<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">`+
		`<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="xl/workbook.xml"/></Relationships>`)
	put("xl/workbook.xml", `<?xml version="1.0" encoding="UTF-8"?><workbook xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" `+
		`xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"><sheets><sheet name="Sheet1" sheetId="1" r:id="rId1"/></sheets></workbook>`)
	rels := `<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/worksheet" Target="worksheets/sheet1.xml"/>`
	if shared != "" {
		rels += `<Relationship Id="rId2" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/sharedStrings" Target="sharedStrings.xml"/>`
		put("xl/sharedStrings.xml", shared)
	}
	put("xl/_rels/workbook.xml.rels", `<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">`+rels+`</Relationships>`)
	w, err := z.Create("xl/worksheets/sheet1.xml")
	if err != nil {
		t.Fatal(err)
	}
	size := int64(0)
	write := func(s string) {
		k, err := io.WriteString(w, s)
		if err != nil {
			t.Fatal(err)
		}
		size += int64(k)
	}
	write(`<?xml version="1.0" encoding="UTF-8"?><worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData>` + head)
	bw := bufio.NewWriterSize(w, 64<<10)
	body(func(s string) {
		k, err := bw.WriteString(s)
		if err != nil {
			t.Fatal(err)
		}
		size += int64(k)
	})
	if err := bw.Flush(); err != nil {
		t.Fatal(err)
	}
	write(tail + `</sheetData></worksheet>`)
	if err := z.Close(); err != nil {
		t.Fatal(err)
	}
	return p, size
}

const hostileHeader = `<row><c t="inlineStr"><is><t>customerId</t></is></c><c t="inlineStr"><is><t>productId</t></is></c><c t="inlineStr"><is><t>amount</t></is></c></row>`

// TestHostileWorkbooksReadInBoundedMemory: a workbook is refused at its first row over the cap, or
// when its XML passes the budget, having read no more than the budget and allocated a bounded
// amount, however far it unpacks: a million rows packed into 232 KB, a million numbered rows in
// 10 MB, a cell, a shared text or whitespace that unpacks to hundreds of megabytes, a cell in the
// last column.
func TestHostileWorkbooksReadInBoundedMemory(t *testing.T) {
	dir := t.TempDir()
	row := `<row><c t="inlineStr"><is><t>cus-1</t></is></c><c t="inlineStr"><is><t>prod-1</t></is></c><c><v>5</v></c></row>`
	repeat := func(s string, n int) func(func(string)) {
		return func(write func(string)) {
			for range n {
				write(s)
			}
		}
	}
	// numbered rows, each with an amount of its own: about 10 MB deflated
	numbered := func(write func(string)) {
		var b []byte
		for i := 2; i <= 1_000_001; i++ {
			b = append(b[:0], `<row r="`...)
			b = strconv.AppendInt(b, int64(i), 10)
			b = append(b, `"><c t="s"><v>0</v></c><c t="s"><v>1</v></c><c><v>`...)
			b = strconv.AppendInt(b, int64(1000+i*7919%100000), 10)
			write(string(append(b, `</v></c></row>`...)))
		}
	}
	shared := `<?xml version="1.0" encoding="UTF-8"?><sst xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><si><t>`
	mb := strings.Repeat("A", 1<<20)
	const bomb = 2 * maxXMLBytes >> 20 // MB a bomb unpacks to: twice what is read
	sst := shared + `cus-1</t></si><si><t>prod-1</t></si></sst>`
	cases := []struct {
		name, shared, head string
		body               func(func(string))
		tail, want         string
		maxRead            int64 // XML bytes read at most
	}{
		{"a million identical rows", "", hostileHeader, repeat(row, 1_000_000), "", "line 10002: more than 10000 data rows", 2 << 20},
		{"a million numbered rows", sst, hostileHeader, numbered, "", "line 10002: more than 10000 data rows", 2 << 20},
		// encoding/xml holds a text whole before it returns it: a text is bounded by the budget
		{"a cell of 64 MB", "", hostileHeader + `<row><c t="inlineStr"><is><t>`, repeat(mb, bomb), `</t></is></c></row>`,
			`line 2 column A: the cell holds more than the 32767 characters`, maxXMLBytes},
		{"a shared text of 64 MB", shared, hostileHeader, repeat("", 0), "",
			"a shared text of the workbook is longer than the 32767 characters", maxXMLBytes},
		{"a million blank rows and more", "", hostileHeader, repeat(strings.Repeat("<row/>", 10_000), 120), "",
			"line 1048576: the sheet has more rows than a spreadsheet may have", 8 << 20},
		{"64 MB of blank rows", "", hostileHeader, repeat(`<row/>`+strings.Repeat(" ", 1<<20), bomb), "",
			"unpacks to more than 32 MiB of sheet data", maxXMLBytes},
		{"64 MB of white space", "", hostileHeader, repeat(strings.Repeat(" ", 1<<20), bomb), "", "unpacks to more than 32 MiB", maxXMLBytes},
		{"a cell in the last column", "", hostileHeader, repeat(`<row r="2"><c r="XFD2"><v>1</v></c></row>`, 1), "",
			"line 2: a value in column XFD, beyond the 256 columns", 1 << 10},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			sh := tc.shared
			if sh == shared {
				// a shared text of 300 MB: the part is written whole, as the sheet is
				var b strings.Builder
				b.WriteString(sh)
				b.WriteString(strings.Repeat(mb, bomb))
				b.WriteString(`</t></si></sst>`)
				sh = b.String()
			}
			level := flate.BestSpeed // quick to write, and packs a bomb a thousandfold
			if tc.name == "a million numbered rows" {
				level = flate.DefaultCompression // a file of about 10 MB
			}
			path, unpacked := hostileXLSX(t, dir, strings.ReplaceAll(tc.name, " ", "_")+".xlsx", sh, tc.head, tc.body, tc.tail, level)
			st, err := os.Stat(path)
			if err != nil {
				t.Fatal(err)
			}
			if st.Size() > MaxInputBytes {
				t.Fatalf("the fixture is %d bytes, over the size cap: it would not test reading", st.Size())
			}
			f, size, err := openRegular(path)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			w, err := openWorkbook(path, f, size)
			if err == nil {
				_, _, err = w.readSheet(w.sheets[0], func([]string) bool { return true })
			}
			runtime.ReadMemStats(&after)
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), path) {
				t.Fatalf("got %v, want an error naming %s and saying %q", err, path, tc.want)
			}
			read := int64(maxXMLBytes)
			if w != nil {
				read -= w.left
			}
			if read > tc.maxRead {
				t.Errorf("read %d bytes of XML (of %d in the file's sheet, %d in %d KB on disk), want at most %d",
					read, unpacked, len(sh), st.Size()>>10, tc.maxRead)
			}
			// Decoding allocates as it goes; what it holds at once is far less. The bound is
			// what reading may cost in all.
			if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 8*maxXMLBytes {
				t.Errorf("reading allocated %d MB", alloc>>20)
			}
			t.Logf("%d KB on disk, %d MB of XML; read %d KB; allocated %d MB; %v", st.Size()>>10, (unpacked+int64(len(sh)))>>20, read>>10,
				(after.TotalAlloc-before.TotalAlloc)>>20, err)
		})
	}
}

// TestWorkbookSheetsSkippedAfterTheirHeader: a report workbook fed in whole is read only as far as
// it must be: the sheets before the wanted one only to their header, whatever their size.
func TestWorkbookSheetsSkippedAfterTheirHeader(t *testing.T) {
	dir := t.TempDir()
	row := `<row><c t="inlineStr"><is><t>x</t></is></c></row>`
	body := func(write func(string)) {
		for range 100_000 {
			write(row)
		}
	}
	path, _ := hostileXLSX(t, dir, "other.xlsx", "", `<row><c t="inlineStr"><is><t>name</t></is></c></row>`, body, "", flate.BestSpeed)
	f, size, err := openRegular(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w, err := openWorkbook(path, f, size)
	if err != nil {
		t.Fatal(err)
	}
	tab, ok, err := w.readSheet(w.sheets[0], func(h []string) bool { return len(h) == 3 })
	if err != nil || ok || len(tab.rows) != 0 || len(tab.header) != 1 {
		t.Fatalf("a sheet not wanted: %v, %v, %d rows, header %v", err, ok, len(tab.rows), tab.header)
	}
	if read := maxXMLBytes - w.left; read > 128<<10 {
		t.Errorf("read %d bytes of a sheet not wanted", read)
	}
	if !bytes.Contains([]byte(fmt.Sprint(tab.header)), []byte("name")) {
		t.Errorf("header %v", tab.header)
	}
}
