package report

import (
	"fmt"
	"os"
	"path/filepath"
)

// atomicFile is written under a temporary name beside its final path and
// renamed into place on commit, so a reader never sees half a report.
type atomicFile struct {
	*os.File
	path string
}

func createAtomic(path string) (*atomicFile, error) {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return nil, fmt.Errorf("create %s: %w", path, err)
	}
	return &atomicFile{File: f, path: path}, nil
}

func (f *atomicFile) commit() error {
	if err := f.Sync(); err != nil {
		f.abort()
		return fmt.Errorf("write %s: %w", f.path, err)
	}
	if err := f.Close(); err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("write %s: %w", f.path, err)
	}
	if err := os.Chmod(f.Name(), 0o644); err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("write %s: %w", f.path, err)
	}
	if err := os.Rename(f.Name(), f.path); err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("write %s: %w", f.path, err)
	}
	return nil
}

func (f *atomicFile) abort() {
	f.Close()
	os.Remove(f.Name())
}
