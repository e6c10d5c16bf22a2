// Command distpack assembles the toolkit's release artefacts from binaries
// that `make release` has already built: reproducible archives and their
// SHA256SUMS, the THIRD_PARTY licence report, the MCP bundles (.mcpb) of
// storelink-mcp and their MCP Registry server.json, and the container image
// of storelink-mcp as OCI and docker archives, without a container engine.
//
// Every output is a function of its inputs and of -epoch (the commit time):
// no clock, user name, umask or directory order of the build machine leaks
// into it, so two builds of one commit are byte for byte the same.
package main

import (
	"errors"
	"fmt"
	"io"
	"os"
)

const usage = `distpack: assemble release artefacts (run by make release and make image).

Usage:
  distpack archive -o OUT.tar.gz -root DIR -epoch SECONDS FILE...
  distpack sums -o SHA256SUMS FILE...
  distpack licenses -o THIRD_PARTY -platforms LIST PACKAGE...
  distpack bundle -o OUT.mcpb -version V -os GOOS -source URL -epoch SECONDS storelink-mcp FILE...
  distpack registry -o server.json -version V -source URL BUNDLE.mcpb...
  distpack image -out-dir DIR -version V -revision COMMIT -source URL -epoch SECONDS linux/ARCH=BINARY...
`

func main() {
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		var u usageError
		if errors.As(err, &u) {
			fmt.Fprintln(os.Stderr, "distpack:", err)
			os.Exit(2)
		}
		fmt.Fprintln(os.Stderr, "distpack:", err)
		os.Exit(1)
	}
}

// usageError is a malformed command line (exit 2).
type usageError struct{ error }

func run(args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return usageError{errors.New("no command")}
	}
	cmd, args := args[0], args[1:]
	switch cmd {
	case "archive":
		return runArchive(args, stderr)
	case "sums":
		return runSums(args, stderr)
	case "licenses":
		return runLicenses(args, stderr)
	case "bundle":
		return runBundle(args, stderr)
	case "registry":
		return runRegistry(args, stderr)
	case "image":
		return runImage(args, stdout, stderr)
	case "-h", "--help", "help":
		_, err := fmt.Fprint(stdout, usage)
		return err
	default:
		fmt.Fprint(stderr, usage)
		return usageError{fmt.Errorf("unknown command %q", cmd)}
	}
}
