package console

import (
	"fmt"
	"math"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/korral/storelink/mcpserver/internal/projection"
	"github.com/korral/storelink/mcpserver/internal/textsafe"
)

// untrustedOpen starts the data marker the MCP server puts around text that
// people typed into StoreLink: ⟦untrusted:TAG⟧text⟦/TAG⟧. It tells a model
// data from instructions; a person needs the text alone.
const untrustedOpen = "⟦untrusted:"

// stripMarker returns the text inside a data marker wrapping all of s, or s
// when it is not one.
func stripMarker(s string) string {
	if !strings.HasPrefix(s, untrustedOpen) {
		return s
	}
	rest := s[len(untrustedOpen):]
	end := strings.Index(rest, "⟧")
	if end <= 0 {
		return s
	}
	closing := "⟦/" + rest[:end] + "⟧"
	body := rest[end+len("⟧"):]
	if !strings.HasSuffix(body, closing) {
		return s
	}
	return strings.TrimSuffix(body, closing)
}

// shown is a backend string as a page prints it: without its data marker,
// and with control, format and bidirectional characters written as visible
// escapes, so that a product name cannot reverse the reading order of a
// row. html/template then escapes it for HTML.
func shown(s string) string { return textsafe.Escape(stripMarker(s)) }

func shownAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = shown(s)
	}
	return out
}

// The clean methods pass every string a backend returned through shown,
// once, where the console receives it, so no template can forget to.

func (a Approver) clean() Approver {
	a.Name = shown(a.Name)
	return a
}

// ApprovalID stays as given: the server made it, and links carry it back.
func (o OrderSummary) clean() OrderSummary {
	o.StoreID = shown(o.StoreID)
	o.StoreName = shown(o.StoreName)
	o.SKU = shown(o.SKU)
	o.ProductName = shown(o.ProductName)
	o.Reason = shown(o.Reason)
	o.RequestedBy = shown(o.RequestedBy)
	o.NotSending = shown(o.NotSending)
	return o
}

func (d Decision) clean() Decision {
	d.By = shown(d.By)
	d.OrderID = shown(d.OrderID)
	d.Note = shown(d.Note)
	return d
}

func (d OrderDetail) clean() OrderDetail {
	d.OrderSummary = d.OrderSummary.clean()
	if d.Decision != nil {
		c := d.Decision.clean()
		d.Decision = &c
	}
	j := &d.Justification
	j.Headline = shown(j.Headline)
	j.Confidence = shown(j.Confidence)
	j.DuplicateWarning = shown(j.DuplicateWarning)
	j.Flags = flagWords(shownAll(j.Flags))
	j.Caveat = forPeople(shown(j.Caveat))
	j.Check.Verdict = shown(j.Check.Verdict)
	reasons := []string{}
	for _, r := range j.Check.Reasons {
		if r = forPeople(shown(r)); r != "" {
			reasons = append(reasons, r)
		}
	}
	j.Check.Reasons = reasons
	ev := make([]EvidenceDay, len(d.Evidence))
	for i, e := range d.Evidence {
		ev[i] = EvidenceDay{Date: shown(e.Date), UnitsSold: e.UnitsSold, Flags: flagWords(shownAll(e.Flags))}
	}
	d.Evidence = ev
	return d
}

func (d DecidedOrder) clean() DecidedOrder {
	d.OrderSummary = d.OrderSummary.clean()
	d.Decision = d.Decision.clean()
	return d
}

func cleanAuditRow(r AuditRow) AuditRow {
	r.CallID = shown(r.CallID)
	r.Client = shown(r.Client)
	r.Tool = shown(r.Tool)
	r.StoreID = shown(r.StoreID)
	r.SKU = shown(r.SKU)
	r.Outcome = shown(r.Outcome)
	r.ErrorCode = shown(r.ErrorCode)
	r.Summary = shown(r.Summary)
	return r
}

func (o Outcome) clean() Outcome {
	o.OrderID = shown(o.OrderID)
	o.OrderStatus = shown(o.OrderStatus)
	o.DecidedBy = shown(o.DecidedBy)
	o.Reason = forPeople(shown(o.Reason))
	return o
}

// flagWords names each flag in words, from package projection (the words
// the answers and the views use): a data-quality flag as a sentence, a
// day's flag as a phrase. An unknown flag keeps its id.
func flagWords(flags []string) []string {
	out := make([]string, len(flags))
	for i, f := range flags {
		out[i] = f
		if slices.Contains(projection.Flags(), projection.Flag(f)) {
			out[i] = projection.FlagWords(projection.Flag(f))
		} else if slices.Contains(projection.DayFlags(), projection.DayFlag(f)) {
			out[i] = projection.DayFlagWords(projection.DayFlag(f))
		}
	}
	return out
}

// forModel matches a clause written for the model rather than a person:
// a parameter or field name (snake_case), a call's argument, or an
// instruction about relaying.
var forModel = regexp.MustCompile(`\b[a-z]+_[a-z_]+\b|\bconfirm:|\bcall again\b|(?i)\btell the (user|buyer)\b|\brelay`)

// forPeople drops the clauses of s (split at "; " and ". ") that are
// written for the model, so a page shows only what a person acts on.
func forPeople(s string) string {
	var keep []string
	for _, sentence := range strings.SplitAfter(s, ". ") {
		var clauses []string
		for _, c := range strings.Split(strings.TrimSpace(sentence), "; ") {
			if c != "" && !forModel.MatchString(c) {
				clauses = append(clauses, strings.TrimSuffix(c, "."))
			}
		}
		if len(clauses) > 0 {
			keep = append(keep, strings.Join(clauses, "; ")+".")
		}
	}
	out := strings.Join(keep, " ")
	if out != "" && !strings.HasSuffix(s, ".") {
		out = strings.TrimSuffix(out, ".")
	}
	return out
}

// timeLayout is how pages print a time: in the location the backend gave
// it (the store's, for store times), with its offset, so nobody has to
// guess a timezone.
const timeLayout = "2006-01-02 15:04 -07:00"

func when(t time.Time) string {
	if t.IsZero() {
		return "unknown"
	}
	return t.Format(timeLayout)
}

// quantity says an order's size the way a buyer counts it: units and cases.
func quantity(units, casePack int64) string {
	u := plural(units, "unit", "units")
	if casePack <= 0 {
		return u + " (case pack unknown)"
	}
	cases, rest := units/casePack, units%casePack
	s := fmt.Sprintf("%s = %s of %d", u, plural(cases, "case", "cases"), casePack)
	if rest != 0 {
		s += fmt.Sprintf(" + %s", plural(rest, "unit", "units"))
	}
	return s
}

func plural(n int64, one, many string) string {
	if n == 1 || n == -1 {
		return fmt.Sprintf("%d %s", n, one)
	}
	return fmt.Sprintf("%d %s", n, many)
}

// remaining is the time left until t, as "1 h 05 min left", or "lapsed".
func remaining(now, t time.Time) string {
	if t.IsZero() {
		return "no expiry"
	}
	d := t.Sub(now)
	if d <= 0 {
		return "lapsed"
	}
	m := int64(math.Ceil(d.Minutes()))
	if m < 60 {
		return fmt.Sprintf("%d min left", m)
	}
	return fmt.Sprintf("%d h %02d min left", m/60, m%60)
}

// days prints a number of days with one decimal.
func days(f float64) string {
	return fmt.Sprintf("%.1f", f)
}
