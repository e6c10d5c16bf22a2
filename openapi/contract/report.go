package contract

import (
	"fmt"
	"regexp"
	"strings"
	"time"
)

// Verdict is the outcome of one probe, or of a whole check.
type Verdict string

// Verdicts, from best to worst for a single probe.
const (
	// Pass: the expected status, and the answer conforms.
	Pass Verdict = "pass"
	// Skipped: the probe was not sent on purpose; it does not fail a check.
	Skipped Verdict = "skipped"
	// Drift: StoreLink answered, and the answer breaks the contract.
	Drift Verdict = "drift"
	// Error: the probe could not be checked (no answer, 429/5xx, a bound
	// reached).
	Error Verdict = "error"
)

// Kinds of finding.
const (
	// FindingStatus: the status is not the one the probe expects.
	FindingStatus = "wrong-status"
	// FindingUndeclaredStatus: the endpoint does not declare the status.
	FindingUndeclaredStatus = "undeclared-status"
	// FindingErrorIn200: a successful status with an error body.
	FindingErrorIn200 = "error-in-200"
	// FindingSchema: the body breaks the response's schema; Path is the
	// JSON Pointer of the offending value, Schema the rule it breaks.
	FindingSchema = "schema"
	// FindingHeader: a header is missing or breaks its schema; Path names
	// the header.
	FindingHeader = "header"
	// FindingBody: the body is not JSON or cannot be read as declared.
	FindingBody = "body"
	// FindingRule: the body breaks a semantic rule (storelinkclient/rules);
	// Rule names it.
	FindingRule = "rule"
	// FindingRequest: the checker's own request breaks the contract.
	FindingRequest = "request"
)

// Finding is one way an answer breaks the contract.
type Finding struct {
	// Kind is one of the Finding* constants.
	Kind string `json:"kind"`
	// Path is a JSON Pointer into the body ("" for all of it) or a header
	// name.
	Path string `json:"path,omitempty"`
	// Schema locates the broken rule, e.g.
	// "#/components/schemas/Inventory/required".
	Schema string `json:"schema,omitempty"`
	// Rule is a FindingRule's rule id, e.g. "store.hours.order".
	Rule string `json:"rule,omitempty"`
	// Message says what is wrong, without quoting values from the body.
	Message string `json:"message"`
	// Assumption marks a finding that rests on the probe's Assumption, not
	// on the contract. Config.NoAssumptions leaves such probes out.
	Assumption bool `json:"assumption,omitempty"`
	// Details are further breaks that follow from this finding, one line
	// each.
	Details []string `json:"details,omitempty"`
	// Count is how many array items had the finding, when more than one;
	// Path then has indices folded to "*".
	Count int `json:"count,omitempty"`
	// Evidence is what suggest needs to propose a change of the contract.
	Evidence *Evidence `json:"evidence,omitempty"`
}

// capFindings keeps at most maxFindings findings, the last one saying how
// many more there were (see isMore).
func capFindings(fs []Finding) []Finding {
	if len(fs) <= maxFindings {
		return fs
	}
	more := len(fs) - maxFindings + 1
	return append(fs[:maxFindings-1], Finding{Kind: fs[maxFindings-1].Kind, Message: fmt.Sprintf("and %d more", more)})
}

// Result is one probe's outcome.
type Result struct {
	// Operation is the contract's operationId.
	Operation string `json:"operation_id"`
	// Endpoint is the method and path template, e.g. "GET /v1/stores/{store_id}".
	Endpoint string `json:"endpoint"`
	// Probe names the case, e.g. "no key".
	Probe string `json:"probe"`
	// Request is the method and path sent, without any header.
	Request string `json:"request,omitempty"`
	// Key says whose key was sent ("key of store 47", "no key"); never the key.
	Key string `json:"key,omitempty"`
	// Expected lists the statuses the contract calls for.
	Expected []int `json:"expected"`
	// Assumption is what the probe assumes beyond the contract; empty for a
	// probe of the contract's own rules.
	Assumption string `json:"assumption,omitempty"`
	// Got is the status received; 0 when nothing was received.
	Got     int     `json:"got,omitempty"`
	Verdict Verdict `json:"verdict"`
	// Detail is a one-line reason.
	Detail   string    `json:"detail,omitempty"`
	Findings []Finding `json:"findings,omitempty"`
	// Retries counts the resends after a 429, each after its Retry-After.
	Retries int `json:"retries,omitempty"`
	// DurationMS is the probe's time, waits included; 0 when not sent.
	DurationMS float64 `json:"duration_ms"`
	// Phase and CaseID are set for a generated case (check --generate).
	Phase  string `json:"phase,omitempty"`
	CaseID string `json:"case_id,omitempty"`
	// ExpectedClass is a generated case's accepted class, e.g. "4xx".
	ExpectedClass string `json:"expected_class,omitempty"`
	// Case is a failing generated case, shrunk, as in the replay file.
	Case *Case `json:"case,omitempty"`
}

// Summary counts the probes by verdict.
type Summary struct {
	Probes  int `json:"probes"`
	Pass    int `json:"pass"`
	Drift   int `json:"drift"`
	Skipped int `json:"skipped"`
	Error   int `json:"error"`
	// DriftOnAssumptions counts drifting probes whose every finding is an
	// assumption.
	DriftOnAssumptions int `json:"drift_on_assumptions"`
}

// Report is the outcome of a check.
type Report struct {
	BaseURL         string `json:"base_url"`
	ContractVersion string `json:"contract_version"`
	// ContractSpec names the spec checked against when it is not the
	// embedded contract (check --spec), so a re-check against a patched copy
	// says which copy.
	ContractSpec string `json:"contract_spec,omitempty"`
	Store        string `json:"store"`
	SKU          string `json:"sku"`
	WriteStore   string `json:"write_store,omitempty"`
	// Verdict is pass when every probe passed or was skipped, drift when any
	// drifted, error otherwise.
	Verdict Verdict `json:"verdict"`
	// Aborted says why the check stopped before its last probe.
	Aborted string  `json:"aborted,omitempty"`
	Summary Summary `json:"summary"`
	// Requests is how many requests were sent.
	Requests int `json:"requests"`
	// StartedAt is when the check began (UTC); DurationMS how long it took.
	StartedAt  time.Time `json:"started_at"`
	DurationMS float64   `json:"duration_ms"`
	// Causes are the root causes of the drift, most telling first.
	Causes []Cause `json:"causes"`
	// Coverage says, per operation, whether the check reached it.
	Coverage []Coverage `json:"coverage,omitempty"`
	Probes   []Result   `json:"probes"`
	// Generated sums up the generated cases of check --generate.
	Generated *Generated `json:"generated,omitempty"`
	// OrdersCreated are the orders the check left at StoreLink, including
	// ones a negative probe raised and writes of unknown outcome.
	OrdersCreated []CreatedOrder `json:"orders_created"`
}

// How far the check reached an operation.
const (
	// Checked: an answer with data (a 2xx) was checked.
	Checked = "checked"
	// PartlyChecked: only refusals were answered, so the success schema
	// and rules were not checked.
	PartlyChecked = "partly checked"
	// NotChecked: no request of the operation was answered.
	NotChecked = "skipped"
)

// Coverage is how far a check reached one operation.
type Coverage struct {
	Operation string `json:"operation_id"`
	Endpoint  string `json:"endpoint"`
	// Status is Checked, PartlyChecked or NotChecked.
	Status string `json:"status"`
	// Why says what kept it from being checked fully.
	Why string `json:"why,omitempty"`
	// Answered counts the probes and cases that got an answer.
	Answered int `json:"answered"`
}

// finish computes the summary and the overall verdict.
func (r *Report) finish() {
	s := Summary{Probes: len(r.Probes)}
	for _, p := range r.Probes {
		switch p.Verdict {
		case Pass:
			s.Pass++
		case Drift:
			s.Drift++
			if onAssumptions(p.Findings) {
				s.DriftOnAssumptions++
			}
		case Skipped:
			s.Skipped++
		default:
			s.Error++
		}
	}
	r.Summary = s
	r.Causes = causesOf(r.Probes)
	switch {
	case s.Drift > 0:
		r.Verdict = Drift
	case s.Error > 0 || r.Aborted != "":
		r.Verdict = Error
	default:
		r.Verdict = Pass
	}
}

// onAssumptions reports whether every finding is an assumption.
func onAssumptions(fs []Finding) bool {
	for _, f := range fs {
		if !f.Assumption {
			return false
		}
	}
	return len(fs) > 0
}

// ExitCode is the process exit code for the report: 0 when StoreLink
// conforms, 1 on drift, 2 when the check could not be completed.
func (r *Report) ExitCode() int {
	switch r.Verdict {
	case Pass:
		return 0
	case Drift:
		return 1
	}
	return 2
}

// Redact replaces every occurrence of the secrets in the report's text, in
// case StoreLink echoes a key.
func (r *Report) Redact(secrets ...string) {
	rep := redactor(secrets)
	if rep == nil {
		return
	}
	f := rep.Replace
	r.BaseURL, r.Aborted = f(r.BaseURL), f(r.Aborted)
	for i := range r.Causes {
		c := &r.Causes[i]
		c.ID, c.Schema, c.Path, c.Text = f(c.ID), f(c.Schema), f(c.Path), f(c.Text)
		for j := range c.Examples {
			c.Examples[j] = f(c.Examples[j])
		}
		if ev := c.Evidence; ev != nil {
			ev.Component, ev.Property, ev.Found = f(ev.Component), f(ev.Property), f(ev.Found)
		}
	}
	for i := range r.Coverage {
		r.Coverage[i].Why = f(r.Coverage[i].Why)
	}
	for i := range r.OrdersCreated {
		o := &r.OrdersCreated[i]
		o.OrderID, o.Request, o.Probe = f(o.OrderID), f(o.Request), f(o.Probe)
	}
	for i := range r.Probes {
		p := &r.Probes[i]
		p.Request, p.Detail, p.Assumption = f(p.Request), f(p.Detail), f(p.Assumption)
		for j := range p.Findings {
			fd := &p.Findings[j]
			fd.Path, fd.Schema, fd.Message = f(fd.Path), f(fd.Schema), f(fd.Message)
			for k := range fd.Details {
				fd.Details[k] = f(fd.Details[k])
			}
			if ev := fd.Evidence; ev != nil {
				ev.Component, ev.Property, ev.Found = f(ev.Component), f(ev.Property), f(ev.Found)
			}
		}
	}
}

// Redacted is what Redact puts in place of a secret.
const Redacted = "[redacted]"

func redactor(secrets []string) *strings.Replacer {
	var pairs []string
	for _, s := range secrets {
		if s != "" {
			pairs = append(pairs, s, Redacted)
		}
	}
	if pairs == nil {
		return nil
	}
	return strings.NewReplacer(pairs...)
}

// moreFinding matches the message of the finding capFindings puts last.
var moreFinding = regexp.MustCompile(`^and [0-9]+ more$`)

// isMore reports whether f is capFindings' "more" finding.
func isMore(f Finding) bool {
	return f.Path == "" && f.Rule == "" && moreFinding.MatchString(f.Message)
}
