// Package cli gives every billsync command the Go tools' conventions: -h/--help prints the
// usage to stdout and exits 0; a usage error (unknown flag, bad value, bad combination) or a
// configuration error (Config) prints the error and one line pointing to -h on stderr and exits 2 (the problem, not a screenful of
// usage it scrolls away); any other failure exits 1.
package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
)

// UsageError is a mistake in the command line. Usage prints the command's usage.
type UsageError struct {
	Err   error
	Usage func(io.Writer)
}

func (e *UsageError) Error() string { return e.Err.Error() }
func (e *UsageError) Unwrap() error { return e.Err }

// Usagef makes a UsageError for a flag set.
func Usagef(fs *flag.FlagSet, format string, args ...any) error {
	return &UsageError{Err: fmt.Errorf(format, args...), Usage: usageOf(fs)}
}

// Config marks err (nil stays nil) as a mistake in the settings (a variable or a flag the
// command cannot run with, a key it cannot read): Exit treats it as a usage error, exit 2 with
// the pointer to -h, because trying again cannot help (a supervisor retries exit 1). An error
// already marked stays as it is.
func Config(err error) error {
	var u *UsageError
	if err == nil || errors.As(err, &u) {
		return err
	}
	return &UsageError{Err: err}
}

// Usage wraps err (nil stays nil) as a usage error of fs.
func Usage(fs *flag.FlagSet, err error) error {
	if err == nil {
		return nil
	}
	return &UsageError{Err: err, Usage: usageOf(fs)}
}

func usageOf(fs *flag.FlagSet) func(io.Writer) {
	return func(w io.Writer) {
		out := fs.Output()
		fs.SetOutput(w)
		fs.Usage()
		fs.SetOutput(out)
	}
}

// Parse parses args with fs. The flag package's own messages are silenced; -h and --help
// return a HelpError, every other parse error a UsageError. fs.Usage must write to
// fs.Output().
func Parse(fs *flag.FlagSet, args []string) error {
	out := fs.Output()
	fs.SetOutput(io.Discard)
	err := fs.Parse(args)
	fs.SetOutput(out)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, flag.ErrHelp):
		return HelpError{Usage: usageOf(fs)}
	}
	return Usage(fs, err)
}

// StatusError ends a command that said what it had to say with an exit status of its own (a
// monitor's codes, syncer status): Exit prints nothing more.
type StatusError struct{ Code int }

func (e StatusError) Error() string { return fmt.Sprintf("exit status %d", e.Code) }

// HelpError is returned for -h: Exit prints the usage to stdout and exits 0.
type HelpError struct{ Usage func(io.Writer) }

func (HelpError) Error() string        { return "help requested" }
func (HelpError) Is(target error) bool { return target == flag.ErrHelp }

// Exit prints err as the command name's final word and returns the exit status: 0 for nil or
// help (usage on stdout), 2 for a usage error (message and a pointer to -h on stderr), 1 otherwise. The
// message is printed whole, every line of it: a list of problems is shown, never cut to its first.
func Exit(name string, err error, stdout, stderr io.Writer) int {
	var help HelpError
	var usage *UsageError
	var code StatusError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &help):
		if help.Usage != nil {
			help.Usage(stdout)
		}
		return 0
	case errors.Is(err, flag.ErrHelp):
		return 0
	case errors.As(err, &code):
		return code.Code
	case errors.As(err, &usage):
		fmt.Fprintf(stderr, "%s: %v\n", name, err)
		fmt.Fprintf(stderr, "run '%s -h' for the flags and their environment variables\n", name)
		return 2
	}
	fmt.Fprintf(stderr, "%s: %v\n", name, err)
	return 1
}
