package tablefile

import (
	"fmt"
	"os"
	"path/filepath"
)

// File is written under a temporary name beside its final path and renamed into place on
// Commit, so a reader never sees half a file: every report, plan and result file is one.
type File struct {
	*os.File
	path string
}

// Create starts the file that Commit puts at path.
func Create(path string) (*File, error) {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return nil, fmt.Errorf("create %s: %w", path, err)
	}
	return &File{File: f, path: path}, nil
}

// Commit syncs the file, makes it readable by all (0644) and renames it into place; on failure
// nothing is left behind.
func (f *File) Commit() error {
	if err := f.Sync(); err != nil {
		f.Abort()
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

// Abort closes the file and removes it: nothing appears at its path.
func (f *File) Abort() {
	f.Close()
	os.Remove(f.Name())
}

// Path is where Commit puts the file.
func (f *File) Path() string { return f.path }
