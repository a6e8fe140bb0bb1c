// Command schedlens reads Linux scheduler traces, measures what the scheduler
// did, and replays the recorded workload under modeled scheduler policies.
//
// This package only wires flags, files and exit codes to the library
// packages; see docs/architecture.md.
package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"
)

// Version is the schedlens version printed by reports; release builds set it
// with -ldflags "-X main.Version=...".
var Version = "0.1.0-dev"

// usageError marks errors in how the command was called (exit code 2).
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

// exitError ends the process with code (record: the traced command's
// exit status).
type exitError struct {
	code int
	err  error
}

func (e exitError) Error() string { return e.err.Error() }
func (e exitError) Unwrap() error { return e.err }

func usagef(format string, args ...any) error { return usageError{fmt.Errorf(format, args...)} }

// newRootCmd builds the command tree. Subcommands register themselves in
// subcommands from their own files' init functions.
func newRootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:   "schedlens",
		Short: "Measure and replay Linux scheduler traces",
		Long: `schedlens reads scheduler traces (ftrace text, trace_pipe, trace-cmd report,
perf script, Perfetto protobuf; plain, gzip or zstd), measures wakeup latency,
idle-with-runnable windows and misplaced tasks, and replays the recorded
workload under modeled scheduler policies.`,
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       Version,
	}
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error { return usageError{err} })
	root.SetUsageTemplate(usageTemplate)
	for _, mk := range subcommands {
		root.AddCommand(mk())
	}
	root.InitDefaultCompletionCmd()
	wrapHelp(root)
	return root
}

// subcommands holds the constructors of the top-level commands.
var subcommands []func() *cobra.Command

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// invocation is the argument list of this run, for reports that print the
// command that made them.
var invocation []string

// run executes one command line and returns the process exit code: 0, 1 for
// errors, 2 for usage errors, the traced command's status for record.
func run(args []string, stdout, stderr io.Writer) int {
	invocation = args
	root := newRootCmd()
	prof := addProfileFlags(root)
	root.SetArgs(args)
	root.SetOut(stdout)
	root.SetErr(stderr)
	err := root.Execute()
	if perr := prof.stop(); err == nil {
		err = perr
	}
	if err == nil {
		return 0
	}
	fmt.Fprintf(stderr, "error: %v\n", err)
	return exitCode(err)
}

// exitCode is the process exit code of a command's error: 2 for usage
// errors, an exitError's own code, else 1.
func exitCode(err error) int {
	var ue usageError
	var xe exitError
	switch {
	case errors.As(err, &ue) || isCobraUsage(err):
		return 2
	case errors.As(err, &xe):
		return xe.code
	}
	return 1
}

// isCobraUsage recognises cobra's own argument-validation errors, which are
// usage errors (exit code 2) like ours.
func isCobraUsage(err error) bool {
	msg := err.Error()
	for _, p := range []string{"accepts ", "requires at least ", "requires at most ", "unknown command ", "invalid argument "} {
		if strings.HasPrefix(msg, p) {
			return true
		}
	}
	return false
}
