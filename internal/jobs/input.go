package jobs

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// readTable reads a CSV (or tab-separated text) or XLSX file. For a workbook, the first sheet whose header
// has every column wanted reports true for is used, so a report workbook with several sheets can be fed in
// as it is.
func readTable(path string, wanted func(header []string) bool) (*table, error) {
	ext := strings.ToLower(filepath.Ext(path))
	if ext != ".csv" && ext != ".txt" && ext != ".xlsx" && ext != ".xlsm" {
		return nil, InputErrors{{File: path, Msg: fmt.Sprintf("unknown file type %q: give a .csv or .xlsx file", filepath.Ext(path))}}
	}
	f, size, err := openRegular(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if ext == ".xlsx" || ext == ".xlsm" {
		return readXLSX(path, f, size, wanted)
	}
	return readCSV(path, io.LimitReader(f, MaxInputBytes+1))
}

// openRegular opens a regular file of at most MaxInputBytes. It opens without blocking (a FIFO would wait for
// a writer) and checks what was opened, so a symlink to a device is caught too.
func openRegular(path string) (*os.File, int64, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, 0, fmt.Errorf("read input: %w", err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, 0, fmt.Errorf("read input: %w", err)
	}
	if !st.Mode().IsRegular() {
		f.Close()
		return nil, 0, InputErrors{{File: path, Msg: fmt.Sprintf("not a regular file (%s): give a saved .csv or .xlsx file",
			fileKind(st.Mode()))}}
	}
	if st.Size() > MaxInputBytes {
		f.Close()
		return nil, 0, InputErrors{{File: path, Msg: fmt.Sprintf("the file is %s, more than the %s a job file may have: split it",
			byteSize(st.Size()), byteSize(MaxInputBytes))}}
	}
	return f, st.Size(), nil
}

func fileKind(m os.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&os.ModeNamedPipe != 0:
		return "a named pipe"
	case m&os.ModeSocket != 0:
		return "a socket"
	case m&os.ModeDevice != 0:
		return "a device"
	}
	return "not a plain file"
}

func readXLSX(path string, f io.ReaderAt, size int64, wanted func([]string) bool) (*table, error) {
	w, err := openWorkbook(path, f, size)
	if err != nil {
		return nil, err
	}
	var first *table
	for _, sh := range w.sheets {
		t, ok, err := w.readSheet(sh, wanted)
		if err != nil {
			return nil, err
		}
		if ok {
			return t, nil
		}
		if first == nil && t.header != nil {
			first = t
		}
	}
	if first == nil {
		return nil, InputErrors{{File: path, Msg: "no sheet has a header row"}}
	}
	return first, nil // its header will be reported as wrong
}
