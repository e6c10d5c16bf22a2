// Package cli is the storelink-mcp program: it turns the command line into
// one command and its exit code. Each command parses its flags and calls
// package app; cli imports no other part.
package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/korral/storelink/mcpserver/buildinfo"
	"github.com/korral/storelink/mcpserver/cliflag"
	"github.com/korral/storelink/mcpserver/internal/app"
	"github.com/korral/storelink/mcpserver/internal/config"
)

// Env is the process's environment, passed in so tests can run the
// program in-process.
type Env struct {
	Getenv   func(string) string
	ReadFile func(string) ([]byte, error)
	Stdin    io.Reader
	Stdout   io.Writer
	Stderr   io.Writer
	// Embedded starts an in-process StoreLink when UPSTREAM_BASE_URL is unset.
	Embedded EmbeddedFunc
	// overrides are the settings given as flags. They win over the
	// environment; copies of Env share the map Run creates.
	overrides map[string]string
}

// getenv reads a setting: a command-line flag, else the environment.
func (e Env) getenv(name string) string {
	if v, ok := e.overrides[name]; ok {
		return v
	}
	return e.Getenv(name)
}

// EmbeddedFunc starts a StoreLink inside the process; a non-zero fixedNow
// pins its clock.
type EmbeddedFunc = app.EmbeddedFunc

// EmbeddedUpstream is a running in-process StoreLink.
type EmbeddedUpstream = app.EmbeddedUpstream

// ExitError carries the process exit code of a failure.
type ExitError struct {
	Code int
	Err  error
}

func (e *ExitError) Error() string { return e.Err.Error() }
func (e *ExitError) Unwrap() error { return e.Err }

// Version is the program's version (see package buildinfo).
var Version = buildinfo.Get().Version

// command is one subcommand: its function and the first lines of --help.
type command struct {
	run      func(ctx context.Context, args []string, env Env) error
	synopsis string
}

// commands are the subcommands by name; Run answers version and help.
var commands = map[string]command{
	"stdio":     {runStdio, stdioSynopsis},
	"serve":     {runServe, serveSynopsis},
	"console":   {runConsole, consoleSynopsis},
	"doctor":    {runDoctor, doctorSynopsis},
	"audit":     {runAudit, auditSynopsis},
	"approvals": {runApprovals, approvalsSynopsis},
	"approvers": {runApprovers, approversUsage},
	"migrate":   {runMigrate, migrateUsage},
}

// Run runs the program with args (without the program name).
func Run(ctx context.Context, args []string, env Env) error {
	if env.ReadFile == nil {
		env.ReadFile = os.ReadFile
	}
	env.overrides = map[string]string{}
	cmd := "stdio"
	if len(args) > 0 && (!strings.HasPrefix(args[0], "-") || cliflag.IsHelp(args[0]) || cliflag.IsVersion(args[0])) {
		cmd, args = args[0], args[1:]
	}
	var err error
	c, ok := commands[cmd]
	switch {
	case ok:
		err = c.run(ctx, args, env)
	case cliflag.IsVersion(cmd):
		_, err = fmt.Fprintln(env.Stdout, buildinfo.Get().String("storelink-mcp"))
	case cliflag.IsHelp(cmd):
		_, err = fmt.Fprint(env.Stdout, usage)
	default:
		return usageError("unknown command %q: want stdio, serve, console, doctor, audit, approvals, approvers, migrate or version (see --help)", cmd)
	}
	if errors.Is(err, flag.ErrHelp) {
		return nil
	}
	return exitError(err)
}

// exitError converts an *app.Error into an *ExitError.
func exitError(err error) error {
	var exit *ExitError
	var failed *app.Error
	if err == nil || errors.As(err, &exit) || !errors.As(err, &failed) {
		return err
	}
	return &ExitError{Code: failed.Code, Err: err}
}

func usageError(format string, args ...any) error {
	return &ExitError{Code: 2, Err: fmt.Errorf(format, args...)}
}

// usageErr is err as a usage error: exit code 2, its message unchanged.
func usageErr(err error) error { return &ExitError{Code: 2, Err: err} }

// options are the app's options, with flags over the environment.
func (e Env) options() app.Options {
	return app.Options{Getenv: e.getenv, ReadFile: e.ReadFile, Log: e.Stderr, Embedded: e.Embedded}
}

// parseFlags parses a subcommand's flags with the settings flags added.
// -h and --help print the synopsis and return flag.ErrHelp (success).
func parseFlags(fs *flag.FlagSet, args []string, env Env, synopsis string) ([]string, error) {
	if fs.Name() != "audit" {
		addSettingFlags(fs, env)
	}
	rest, err := cliflag.Parse(fs, args, synopsis, env.Stdout)
	if err != nil && !errors.Is(err, flag.ErrHelp) {
		return nil, usageErr(err)
	}
	return rest, err
}

// addSettingFlags adds every non-secret setting's flag that the
// subcommand does not define itself.
func addSettingFlags(fs *flag.FlagSet, env Env) {
	config.AddFlags(fs, func(name, value string) { env.overrides[name] = value })
}
