package contract

import (
	"cmp"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/korral/storelink/storelinkclient/rules"
)

// FindingRename is a finding that pairs an undeclared property with an
// absent declared one of compatible type: a candidate rename, not a fact.
const FindingRename = "rename"

// Evidence is what suggest needs to propose a contract change. It names
// properties, types and shapes, never a value of the answer.
type Evidence struct {
	// Component is the schema component, e.g. "Supplier".
	Component string `json:"component,omitempty"`
	// Property is the declared property involved.
	Property string `json:"property,omitempty"`
	// Found is the undeclared property StoreLink sent.
	Found string `json:"found,omitempty"`
	// JSONType is the JSON type of Found's values; "mixed" when they differ.
	JSONType string `json:"json_type,omitempty"`
	// Format is "date-time" when every string value of Found was an RFC
	// 3339 date-time.
	Format string `json:"format,omitempty"`
	// Status is the status StoreLink answered, for a status finding.
	Status int `json:"status,omitempty"`
	// Pattern is the contract's pattern a value broke.
	Pattern string `json:"pattern,omitempty"`
	// Shape describes the values that broke Pattern.
	Shape *Shape `json:"shape,omitempty"`
	// Against lists, for a rename, reasons Found may not be a new name of
	// Property, one line each, never a value. suggest turns such a rename
	// into a review note.
	Against []string `json:"against,omitempty"`
}

// Shape describes strings by their character classes and lengths only.
type Shape struct {
	// Classes is a character class body covering every character seen,
	// e.g. "a-z0-9_".
	Classes string `json:"classes"`
	MinLen  int    `json:"min_len"`
	MaxLen  int    `json:"max_len"`
}

// Cause is one root cause of drift: the findings that share a rule, or a
// place in the contract and a kind, across probes, cases, array items and
// proxied requests.
type Cause struct {
	// ID is stable for the same cause across runs, e.g.
	// "schema:#/components/schemas/Inventory/required:/on_hand_units".
	ID string `json:"id"`
	// Kind is the findings' kind (one of the Finding* constants).
	Kind string `json:"kind"`
	// Rule is the semantic or generated rule id, when there is one.
	Rule string `json:"rule,omitempty"`
	// Schema locates the broken rule in the contract.
	Schema string `json:"schema,omitempty"`
	// Path is the place in the answer with array indices folded to "*",
	// e.g. "/transactions/*/units".
	Path string `json:"path,omitempty"`
	// Text says what is wrong, in one line.
	Text string `json:"text"`
	// Count is how many times the cause was seen.
	Count int `json:"count"`
	// Operations are the operation ids it was seen on, sorted.
	Operations []string `json:"operations"`
	// Examples name the first few probes or requests it was seen in.
	Examples []string `json:"examples,omitempty"`
	// Assumption is set when every occurrence rests on an assumption.
	Assumption bool `json:"assumption,omitempty"`
	// Evidence is what suggest needs to propose a change of the contract.
	Evidence *Evidence `json:"evidence,omitempty"`
}

// maxExamples bounds the examples a cause keeps.
const maxExamples = 3

// causeSet groups findings into causes as they come.
type causeSet struct {
	byID  map[string]*Cause
	order []string
	ops   map[string]map[string]bool
	// assumed counts, per cause, the occurrences that rest on an assumption.
	assumed map[string]int
}

func newCauseSet() *causeSet {
	return &causeSet{byID: map[string]*Cause{}, ops: map[string]map[string]bool{}, assumed: map[string]int{}}
}

// leadingStatus reads the status a generated finding's message starts with.
var leadingStatus = regexp.MustCompile(`^([0-9]{3})\b`)

// undeclaredStatus reads the status of an undeclared-status finding.
var undeclaredStatus = regexp.MustCompile(`^status ([0-9]{3}) is not declared`)

// Statuses a finding says were due and got: a probe's "expected 400, got
// 422", a generated case's "422 for ..., where 400 is due".
var (
	probeStatuses = regexp.MustCompile(`^expected ([0-9]{3}(?: or [0-9]{3})*), got ([0-9]{3})$`)
	caseStatuses  = regexp.MustCompile(`^([0-9]{3}) .*, where ([0-9]{3}) is due$`)
)

// statusPair is the cause of a status used in place of another.
func statusPair(f Finding) (string, bool) {
	if f.Kind == FindingStatus {
		if m := probeStatuses.FindStringSubmatch(f.Message); m != nil {
			return "status:" + m[1] + "->" + m[2], true
		}
	}
	if f.Kind == FindingGenerated {
		if m := caseStatuses.FindStringSubmatch(f.Message); m != nil {
			return "status:" + m[2] + "->" + m[1], true
		}
	}
	return "", false
}

// causeID is the key findings with one cause share: the rule, or the kind
// with the contract and folded answer places. It names no operation, so a
// departure on every endpoint is one cause.
func causeID(f Finding) string {
	if id, ok := statusPair(f); ok {
		return id
	}
	switch f.Kind {
	case FindingRule:
		return "rule:" + f.Rule
	case FindingGenerated:
		id := "generated:" + f.Rule
		if m := leadingStatus.FindStringSubmatch(f.Message); m != nil {
			id += ":" + m[1]
		}
		return id
	case FindingStatus:
		return "wrong-status:" + f.Message
	case FindingUndeclaredStatus:
		if m := undeclaredStatus.FindStringSubmatch(f.Message); m != nil {
			return "undeclared-status:" + m[1]
		}
		return "undeclared-status"
	case FindingErrorIn200:
		return FindingErrorIn200
	case FindingLocalTime:
		return localTimeCause
	case FindingSchema, FindingRename:
		return f.Kind + ":" + f.Schema + ":" + foldPath(f.Path)
	}
	return f.Kind + ":" + f.Path + ":" + f.Message
}

// causeText is a finding's message with its place folded.
func causeText(f Finding) string {
	f.Path, f.Count, f.Assumption, f.Details = foldPath(f.Path), 0, false, nil
	if id, ok := statusPair(f); ok {
		due, got, _ := strings.Cut(strings.TrimPrefix(id, "status:"), "->")
		return fmt.Sprintf("%s: StoreLink answers %s where the contract calls for %s", FindingStatus, got, due)
	}
	if f.Kind == FindingUndeclaredStatus {
		// The message names the first operation; the cause lists them all.
		if m := undeclaredStatus.FindStringSubmatch(f.Message); m != nil {
			return f.Kind + ": StoreLink answers " + m[1] + ", which the contract does not declare for the operation"
		}
	}
	return describe(f)
}

// add counts one finding of the operation, seen in example.
func (cs *causeSet) add(op, example string, f Finding) {
	if isMore(f) {
		return // "and N more" is no cause of its own
	}
	id := causeID(f)
	n := max(f.Count, 1)
	c, ok := cs.byID[id]
	if !ok {
		c = &Cause{ID: id, Kind: f.Kind, Rule: f.Rule, Schema: f.Schema, Path: foldPath(f.Path), Text: causeText(f)}
		if _, pair := statusPair(f); pair {
			c.Kind, c.Rule = FindingStatus, ""
		}
		if c.Kind == FindingStatus || c.Kind == FindingUndeclaredStatus {
			c.Schema = "" // the operation's own response: the cause spans operations
		}
		if m := undeclaredStatus.FindStringSubmatch(f.Message); m != nil && f.Kind == FindingUndeclaredStatus {
			status, _ := strconv.Atoi(m[1])
			c.Evidence = &Evidence{Status: status}
		} else if f.Evidence != nil {
			ev := *f.Evidence
			c.Evidence = &ev
		}
		cs.byID[id] = c
		cs.order = append(cs.order, id)
		cs.ops[id] = map[string]bool{}
	} else {
		c.Evidence = mergeEvidence(c.Evidence, f.Evidence)
	}
	c.Count += n
	if f.Assumption {
		cs.assumed[id] += n
	}
	if op != "" {
		cs.ops[id][op] = true
	}
	if len(c.Examples) < maxExamples && example != "" && !slices.Contains(c.Examples, example) {
		c.Examples = append(c.Examples, example)
	}
}

// mergeEvidence widens a cause's evidence by another occurrence's.
func mergeEvidence(into, ev *Evidence) *Evidence {
	if into == nil || ev == nil {
		return into
	}
	if ev.JSONType != "" && into.JSONType != ev.JSONType {
		into.JSONType = "mixed"
	}
	if ev.Format != into.Format {
		into.Format = ""
	}
	into.Against = addDoubts(slices.Clone(into.Against), ev.Against...)
	if ev.Shape != nil && into.Shape != nil {
		s := *into.Shape
		s.MinLen, s.MaxLen = min(s.MinLen, ev.Shape.MinLen), max(s.MaxLen, ev.Shape.MaxLen)
		s.Classes = unionClasses(s.Classes, ev.Shape.Classes)
		into.Shape = &s
	}
	return into
}

// unionClasses joins two character-class bodies built by shapeOf; a body
// it cannot read is left out.
func unionClasses(a, b string) string {
	out := newClassSet()
	for _, body := range []string{a, b} {
		if c, ok := parseClasses(body); ok {
			out.union(c)
		}
	}
	return out.String()
}

// causeRank orders causes, most telling first.
func causeRank(c *Cause) int {
	switch {
	case c.Kind == FindingRename:
		return 0
	case c.Kind == FindingSchema && strings.HasSuffix(c.Schema, "/required"):
		return 1
	case c.Kind == FindingUndeclaredStatus, c.Kind == FindingErrorIn200:
		return 2
	case c.Kind == FindingStatus:
		return 3
	case c.Kind == FindingRule:
		return 4
	case c.Kind == FindingSchema && strings.HasSuffix(c.Schema, "/additionalProperties"):
		return 7
	case c.Kind == FindingSchema:
		return 5
	}
	return 6
}

// list returns the causes, most telling first, then by count.
func (cs *causeSet) list() []Cause {
	out := make([]Cause, 0, len(cs.order))
	for _, id := range cs.order {
		c := *cs.byID[id]
		c.Operations = slices.Sorted(maps.Keys(cs.ops[id]))
		if c.Operations == nil {
			c.Operations = []string{}
		}
		c.Assumption = cs.assumed[id] == c.Count
		c.Examples = slices.Clone(c.Examples)
		out = append(out, c)
	}
	slices.SortStableFunc(out, func(a, b Cause) int {
		return cmp.Or(cmp.Compare(causeRank(&a), causeRank(&b)), cmp.Compare(b.Count, a.Count), cmp.Compare(a.ID, b.ID))
	})
	return out
}

// causesOf groups the findings of the drifting results into causes.
func causesOf(results []Result) []Cause {
	cs := newCauseSet()
	for _, r := range results {
		if r.Verdict != Drift {
			continue
		}
		cs.addAll(r.Operation, r.Operation+" / "+probeName(r), r.Findings)
	}
	return cs.list()
}

// coverage says, per operation in contract order, how far the results
// reached it.
func coverage(sp *spec, cfg Config, results []Result) []Coverage {
	var out []Coverage
	for _, id := range sp.opOrder() {
		op := sp.ops[id]
		c := Coverage{Operation: id, Endpoint: op.endpoint(), Status: NotChecked}
		var skips, refusals []string
		for _, r := range results {
			if r.Operation != id {
				continue
			}
			wantsData := slices.ContainsFunc(r.Expected, func(s int) bool { return s >= 200 && s < 300 })
			switch {
			case r.Got != 0:
				c.Answered++
				if r.Got >= 200 && r.Got < 300 && r.Verdict != Error {
					c.Status = Checked
				} else if wantsData {
					refusals = append(refusals, fmt.Sprintf("%s: %d", r.Probe, r.Got))
				}
			case wantsData && r.Detail != "":
				skips = append(skips, r.Probe+": "+r.Detail)
			}
		}
		switch {
		case len(cfg.Operations) > 0 && !slices.Contains(cfg.Operations, id):
			c.Why = "not selected (--operation)"
		case c.Status == Checked:
		case c.Answered > 0:
			c.Status = PartlyChecked
			c.Why = "no answer with data, so its success schema and rules were not checked"
			if len(refusals) > 0 {
				c.Why += " (" + strings.Join(refusals, "; ") + ")"
			} else if len(skips) > 0 {
				c.Why += " (" + skips[0] + ")"
			}
		case len(skips) > 0:
			c.Why = skips[0]
		default:
			c.Why = "no probe of it was answered"
		}
		out = append(out, c)
	}
	return out
}

// restating are the rules that restate a bound the schema also states; as
// causes, only the schema's finding counts.
var restating = []string{rules.OrderStatus, rules.OrderRange, rules.InventoryRange, rules.POSUnits,
	rules.SKURange, rules.SupplierRange, rules.SupplierCutoff, rules.StoreHoursFormat, rules.StoreTimezone}

// addAll counts the findings of one answer, leaving out a restating
// rule's finding where a schema finding faults the same place.
func (cs *causeSet) addAll(op, example string, fs []Finding) {
	for _, f := range fs {
		if f.Kind == FindingRule && slices.Contains(restating, f.Rule) && slices.ContainsFunc(fs, func(g Finding) bool {
			return g.Kind == FindingSchema && foldPath(g.Path) == foldPath(f.Path)
		}) {
			continue
		}
		cs.add(op, example, f)
	}
}
