package contract

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
)

// Formats a report renders in.
const (
	FormatTable = "table"
	FormatJSON  = "json"
	FormatJUnit = "junit"
)

// Formats lists the formats [Report.Write] accepts.
var Formats = []string{FormatTable, FormatJSON, FormatJUnit}

// Write renders the report in one of [Formats].
func (r *Report) Write(w io.Writer, format string) error {
	switch format {
	case FormatTable:
		return r.WriteTable(w)
	case FormatJSON:
		return r.WriteJSON(w)
	case FormatJUnit:
		return r.WriteJUnit(w)
	}
	return fmt.Errorf("unknown format %q (want table, json or junit)", format)
}

// WriteTable renders the report for people: one row per probe, one more
// row per further finding, and a closing summary.
func (r *Report) WriteTable(w io.Writer) error {
	var buf bytes.Buffer
	fmt.Fprintf(&buf, "StoreLink contract check of %s against %s (store %s, SKU %s)\n\n",
		r.BaseURL, r.against(), r.Store, r.SKU)
	r.writeCauses(&buf)
	r.writeOrders(&buf)
	r.writeCoverage(&buf)
	tw := tabwriter.NewWriter(&buf, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ENDPOINT\tPROBE\tEXPECTED\tGOT\tVERDICT\tDETAIL")
	for _, p := range r.Probes {
		got := "-"
		if p.Got != 0 {
			got = strconv.Itoa(p.Got)
		}
		detail := p.Detail
		rest := p.Findings
		if p.Verdict == Drift && len(p.Findings) > 0 {
			// The headline of a drift is a finding: print it in full.
			detail, rest = describe(p.Findings[0]), p.Findings[1:]
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", p.Endpoint, probeName(p), expectedText(p), got, strings.ToUpper(string(p.Verdict)), detail)
		if p.Verdict == Drift && len(p.Findings) > 0 {
			for _, d := range p.Findings[0].Details {
				fmt.Fprintf(tw, "\t\t\t\t\t  %s\n", d)
			}
		}
		for _, f := range rest {
			fmt.Fprintf(tw, "\t\t\t\t\t%s\n", describe(f))
			for _, d := range f.Details {
				fmt.Fprintf(tw, "\t\t\t\t\t  %s\n", d)
			}
		}
		if p.Verdict == Drift && p.Assumption != "" && slices.ContainsFunc(p.Findings, func(f Finding) bool { return f.Assumption }) {
			fmt.Fprintf(tw, "\t\t\t\t\t(assumption: the probe assumes %s)\n", p.Assumption)
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	// tabwriter pads the last column too; trailing blanks only get in the
	// way of people diffing two reports.
	trimmed := trailingBlanks.ReplaceAll(buf.Bytes(), []byte("\n"))
	buf.Reset()
	buf.Write(trimmed)
	s := r.Summary
	onAssumed := ""
	if s.DriftOnAssumptions > 0 {
		onAssumed = fmt.Sprintf(" (%d only on an assumption of the check)", s.DriftOnAssumptions)
	}
	fmt.Fprintf(&buf, "\n%d probes, %d requests: %d pass, %d drift%s, %d skipped, %d error.\n",
		s.Probes, r.Requests, s.Pass, s.Drift, onAssumed, s.Skipped, s.Error)
	if s.DriftOnAssumptions > 0 {
		buf.WriteString("A finding marked (assumption) stands on what the check assumes, not on the contract; --no-assumptions leaves those probes out.\n")
	}
	if g := r.Generated; g != nil {
		fmt.Fprintf(&buf, "Generated cases (seed %d): %d planned, %d sent, %d not sent (bounds), %d failing, %d shrunk.\n",
			g.Seed, g.Planned, g.Sent, g.NotSent, g.Failed, g.Shrunk)
	}
	if r.Aborted != "" {
		fmt.Fprintf(&buf, "Check stopped early: %s.\n", r.Aborted)
	}
	switch r.Verdict {
	case Pass:
		buf.WriteString("Result: StoreLink conforms to the contract.\n")
	case Drift:
		buf.WriteString("Result: DRIFT: StoreLink does not conform to the contract.\n")
	default:
		buf.WriteString("Result: INCOMPLETE: the check could not be completed.\n")
	}
	_, err := w.Write(buf.Bytes())
	return err
}

var trailingBlanks = regexp.MustCompile(` +\n`)

// writeCauses lists the causes of drift, most telling first, each once
// with its count and operations: what to read before the probes.
func (r *Report) writeCauses(buf *bytes.Buffer) {
	if len(r.Causes) == 0 {
		return
	}
	fmt.Fprintf(buf, "Causes of drift (%d), most telling first:\n", len(r.Causes))
	for i, c := range r.Causes {
		fmt.Fprintf(buf, "%3d. %s\n     seen %s on %s\n", i+1, c.Text, times(c.Count), strings.Join(c.Operations, ", "))
		if c.Assumption {
			buf.WriteString("     (assumption: stands on what the check assumes, not on the contract)\n")
		}
	}
	buf.WriteString("\n")
}

// writeOrders names every order the check left at StoreLink, so that
// someone cancels them; with writes allowed it says so when none was left.
func (r *Report) writeOrders(buf *bytes.Buffer) {
	if len(r.OrdersCreated) == 0 {
		if r.WriteStore != "" {
			buf.WriteString("Orders left at StoreLink: none.\n\n")
		}
		return
	}
	fmt.Fprintf(buf, "Orders left at StoreLink (%d), safe to cancel:\n", len(r.OrdersCreated))
	for _, o := range r.OrdersCreated {
		fmt.Fprintf(buf, "  - %s\n", o)
	}
	buf.WriteString("\n")
}

// writeCoverage says per operation how far the check reached it.
func (r *Report) writeCoverage(buf *bytes.Buffer) {
	if len(r.Coverage) == 0 {
		return
	}
	buf.WriteString("Coverage:\n")
	tw := tabwriter.NewWriter(buf, 0, 4, 2, ' ', 0)
	for _, c := range r.Coverage {
		fmt.Fprintf(tw, "  %s\t%s\t%s\n", c.Operation, strings.ToUpper(c.Status), c.Why)
	}
	_ = tw.Flush()
	buf.WriteString("\n")
}

func times(n int) string {
	if n == 1 {
		return "once"
	}
	return strconv.Itoa(n) + " times"
}

// probeName is the name of a probe in the table: a generated case is
// prefixed with its id and phase.
func probeName(p Result) string {
	if p.CaseID == "" {
		return p.Probe
	}
	return p.CaseID + " " + p.Phase + ": " + p.Probe
}

// expectedText is the expected column: the statuses, or the class a
// generated case accepts.
func expectedText(p Result) string {
	if p.ExpectedClass != "" {
		return p.ExpectedClass
	}
	return statusList(p.Expected)
}

// describe renders one finding on one line.
func describe(f Finding) string {
	var b strings.Builder
	b.WriteString(f.Kind)
	if f.Rule != "" {
		b.WriteString(" " + f.Rule)
	}
	if f.Assumption {
		b.WriteString(" (assumption)")
	}
	if f.Path != "" || f.Kind == FindingSchema || f.Kind == FindingRule {
		b.WriteString(" at ")
		if f.Path == "" {
			b.WriteString("(whole body)")
		} else {
			b.WriteString(f.Path)
		}
	}
	if f.Count > 1 {
		fmt.Fprintf(&b, " (%d items)", f.Count)
	}
	b.WriteString(": ")
	b.WriteString(f.Message)
	if f.Schema != "" {
		b.WriteString(" [" + f.Schema + "]")
	}
	return b.String()
}

// WriteJSON renders the report as indented JSON.
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// against names what the check compared StoreLink with: the embedded
// contract by its version, or the spec given with --spec by its name too.
func (r *Report) against() string {
	if r.ContractSpec == "" {
		return "contract " + r.ContractVersion
	}
	return fmt.Sprintf("the spec %s (contract %s as it declares)", r.ContractSpec, r.ContractVersion)
}
