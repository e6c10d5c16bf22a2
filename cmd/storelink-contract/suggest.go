package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/korral/storelink/mcpserver/cliflag"
	"github.com/korral/storelink/openapi"
	"github.com/korral/storelink/openapi/contract"
)

const suggestSynopsis = `Usage: storelink-contract suggest FINDINGS [--spec FILE] [--out FILE]

Propose a change of the contract from the causes in FINDINGS (a check report written by
check --format json, or the JSON lines of proxy --findings; "-" reads stdin): renamed
properties of answers and of the order request (each keeps its Go field name through
x-go-name), added properties, missing
properties made optional, undeclared statuses, patterns that reject a new shape. A rename
that another unit, type, bounds or kind of value speaks against is a review comment and a
note, not a change. The patch to openapi/storelink.yaml goes to stdout (apply it with
patch -p1 or git apply, review it, then run make generate and make spec-diff), a summary
of the proposals and of the causes left as notes to stderr. No value StoreLink sent is
ever written into the patch.
Exit codes: 0 done (whether or not a change is proposed), 2 usage error or unreadable input.`

func runSuggest(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("storelink-contract suggest", flag.ContinueOnError)
	var (
		specFile = fs.String("spec", "", "the contract `file` to patch (default: the contract built into this program)")
		outFile  = fs.String("out", "", "also write the patched contract to this `file`")
	)
	fail := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "storelink-contract suggest: "+format+"\n", a...)
		return exitUsage
	}
	rest, err := cliflag.Parse(fs, args, suggestSynopsis, stdout)
	switch {
	case errors.Is(err, flag.ErrHelp):
		return exitConforms
	case err != nil:
		fmt.Fprintln(stderr, err)
		return exitUsage
	case len(rest) != 1:
		return fail("want exactly one findings file (or - for stdin), got %d arguments", len(rest))
	}
	spec := openapi.YAML
	if *specFile != "" {
		if spec, err = os.ReadFile(*specFile); err != nil {
			return fail("--spec: %v", err)
		}
	}
	in := io.Reader(os.Stdin)
	if rest[0] != "-" {
		f, err := os.Open(rest[0])
		if err != nil {
			return fail("%v", err)
		}
		defer f.Close()
		in = f
	}
	causes, err := contract.ReadCauses(in)
	if err != nil {
		return fail("%s: %v", rest[0], err)
	}
	sug, err := contract.Suggest(spec, causes)
	if err != nil {
		return fail("%v", err)
	}
	if *outFile != "" {
		if err := os.WriteFile(*outFile, sug.Patched, 0o644); err != nil {
			return fail("--out: %v", err)
		}
	}
	if _, err := io.WriteString(stdout, sug.Diff); err != nil {
		return fail("write the patch: %v", err)
	}
	writeSuggestSummary(stderr, len(causes), sug)
	return exitConforms
}

// writeSuggestSummary says, for a person, what was proposed and what was
// left as a note: a count line and one line each.
func writeSuggestSummary(w io.Writer, causes int, sug *contract.Suggestion) {
	if causes == 0 {
		fmt.Fprintln(w, "storelink-contract suggest: no causes in the findings: nothing to propose")
		return
	}
	plural := func(n int, one, many string) string {
		if n == 1 {
			return fmt.Sprintf("%d %s", n, one)
		}
		return fmt.Sprintf("%d %s", n, many)
	}
	changes := plural(len(sug.Proposals), "change proposed", "changes proposed")
	if len(sug.Proposals) == 0 {
		changes = "no change proposed"
	}
	fmt.Fprintf(w, "%s, %s left as notes:\n", changes, plural(len(sug.Notes), "cause", "causes"))
	for _, p := range sug.Proposals {
		fmt.Fprintf(w, "  change %s: %s\n", p.CauseID, p.Change)
	}
	for _, n := range sug.Notes {
		fmt.Fprintf(w, "  note   %s: %s\n", n.CauseID, n.Why)
	}
}
