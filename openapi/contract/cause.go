package contract

// FindingRename is the kind of a finding that pairs a property the contract
// does not allow with a declared property that is absent from the same
// object, with a compatible type: a candidate rename, never a fact.
const FindingRename = "rename"

// Evidence is what a finding or a cause knows about StoreLink's answer
// beyond its message, in a form `suggest` can turn into a proposed change of
// the contract. It names properties, types and shapes, never a value of
// the answer.
type Evidence struct {
	// Component is the contract's schema component the finding is about,
	// e.g. "Supplier".
	Component string `json:"component,omitempty"`
	// Property is the declared property involved: the one missing, or the
	// one a pattern or enum finding is about.
	Property string `json:"property,omitempty"`
	// Found is the property the contract does not allow that StoreLink
	// sent (an added property, or the new name of a rename).
	Found string `json:"found,omitempty"`
	// JSONType is the JSON type of Found's values: string, integer,
	// number, boolean, object, array or null; "mixed" when occurrences
	// differ.
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
}

// Shape describes strings by their character classes and lengths only, so
// that a pattern can be relaxed to take them without copying one.
type Shape struct {
	// Classes is a regular-expression character class body covering every
	// character seen, built from the classes a-z, A-Z and 0-9 and the
	// punctuation seen, e.g. "a-z0-9_".
	Classes string `json:"classes"`
	MinLen  int    `json:"min_len"`
	MaxLen  int    `json:"max_len"`
}

// Cause is one root cause of drift: the findings of every probe, generated
// case, array item and (for the proxy) request that share a rule, or a
// place in the contract and a kind, counted once. A report lists causes
// first, most telling first: renames and missing fields before wrong
// statuses, rules and extra fields.
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
	// Assumption is set when every occurrence stands only on an
	// assumption of the check.
	Assumption bool `json:"assumption,omitempty"`
	// Evidence is what suggest needs to propose a change of the contract.
	Evidence *Evidence `json:"evidence,omitempty"`
}
