// Package cliflag holds the toolkit programs' shared command-line rules:
// -h and --help succeed, flags and arguments mix, usage errors are one line.
package cliflag

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
)

// Parse parses args into fs in any order ("--" ends the flags) and returns
// the positional arguments. On -h or --help it writes the usage to stdout
// and returns flag.ErrHelp; any other error is one line.
func Parse(fs *flag.FlagSet, args []string, synopsis string, stdout io.Writer) ([]string, error) {
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				Usage(stdout, fs, synopsis)
				return nil, flag.ErrHelp
			}
			return nil, fmt.Errorf("%s: %w (see --help)", fs.Name(), err)
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return positional, nil
		}
		if consumed := len(args) - len(rest); consumed > 0 && args[consumed-1] == "--" {
			return append(positional, rest...), nil
		}
		positional = append(positional, rest[0])
		args = rest[1:]
	}
}

// Usage writes synopsis followed by the flags' defaults, if there are any.
func Usage(w io.Writer, fs *flag.FlagSet, synopsis string) {
	fmt.Fprint(w, strings.TrimRight(synopsis, "\n")+"\n")
	has := false
	fs.VisitAll(func(*flag.Flag) { has = true })
	if has {
		fmt.Fprintln(w, "\nFlags:")
		fs.SetOutput(w)
		fs.PrintDefaults()
		fs.SetOutput(io.Discard)
	}
}

// IsHelp reports whether arg asks for help.
func IsHelp(arg string) bool {
	switch arg {
	case "-h", "-help", "--help", "help":
		return true
	}
	return false
}

// IsVersion reports whether arg asks for the version.
func IsVersion(arg string) bool {
	switch arg {
	case "-version", "--version", "version":
		return true
	}
	return false
}
