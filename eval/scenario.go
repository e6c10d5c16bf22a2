package eval

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"strings"

	"github.com/korral/storelink/mockstorelink"
)

// Scenario is one evaluation: a user request, the trajectory the scripted
// model replays, the world it runs in, and checks that hold for any model.
type Scenario struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	// NegativeControl marks a scenario whose agent misbehaves on purpose;
	// its checks must fail.
	NegativeControl bool `json:"negative_control,omitempty"`
	// MustFail names the checks a negative control must fail, as the
	// report names them.
	MustFail []string `json:"must_fail,omitempty"`
	Request  string   `json:"request"`
	// BuyerReplies answer, in order, the questions the agent puts to the
	// buyer before its final answer.
	BuyerReplies []string `json:"buyer_replies,omitempty"`
	// Env adds server settings (ALLOW_WRITES, MAX_ORDER_UNITS, ...).
	Env map[string]string `json:"env,omitempty"`
	// Approval turns on approval mode: orders are staged for an approver.
	Approval bool `json:"approval,omitempty"`
	// Events change the world during the session, whoever drives it.
	Events     []Event      `json:"events,omitempty"`
	Trajectory []ScriptStep `json:"trajectory"`
	Expect     Expect       `json:"expect"`
}

// Event changes the mock StoreLink just before a given tool call.
type Event struct {
	// BeforeCall is the 1-based number of the tool call it precedes.
	BeforeCall int `json:"before_call"`
	// RotateKey rotates this store's key on StoreLink's side only.
	RotateKey string `json:"rotate_key,omitempty"`
	// Faults replace the mock's faults (see mockstorelink's README).
	Faults []mockstorelink.Fault `json:"faults,omitempty"`
	// ClearFaults removes every fault.
	ClearFaults bool `json:"clear_faults,omitempty"`
}

// Expect holds the model-agnostic checks of a scenario. Leaving Orders or
// Ledger out means nothing may be written.
type Expect struct {
	// MustCall and MustNotCall name tools.
	MustCall    []string `json:"must_call,omitempty"`
	MustNotCall []string `json:"must_not_call,omitempty"`
	// Outcomes are "tool:OUTCOME" pairs that must occur; an unlisted error
	// outcome fails the scenario.
	Outcomes []string `json:"outcomes,omitempty"`
	// Orders are exactly the orders StoreLink must gain.
	Orders []OrderExpect `json:"orders,omitempty"`
	// Ledger is exactly the ledger entries that must be added or changed.
	Ledger []LedgerExpect `json:"ledger,omitempty"`
	// UpstreamPosts is how many order POSTs must reach StoreLink; by
	// default one per expected order.
	UpstreamPosts *int `json:"upstream_posts,omitempty"`
	// MaxUpstreamRequests, when set, bounds the requests to StoreLink.
	MaxUpstreamRequests *int `json:"max_upstream_requests,omitempty"`
	// UntouchedStores are stores no request may reach StoreLink for.
	UntouchedStores []string `json:"untouched_stores,omitempty"`
	// AnswerMentions must each appear in the final answer (case-insensitive);
	// AnswerOmits must not. A final answer is always required.
	AnswerMentions []string `json:"answer_mentions,omitempty"`
	AnswerOmits    []string `json:"answer_omits,omitempty"`
}

// OrderExpect is an order StoreLink must hold.
type OrderExpect struct {
	StoreID       string `json:"store_id"`
	SKU           string `json:"sku"`
	QuantityUnits int64  `json:"quantity_units"`
}

// LedgerExpect is a ledger entry that must be added or changed.
type LedgerExpect struct {
	StoreID       string `json:"store_id"`
	SKU           string `json:"sku"`
	QuantityUnits int64  `json:"quantity_units"`
	State         string `json:"state"`
}

//go:embed scenarios.json
var scenariosJSON []byte

// Scenarios returns the scenarios of eval/scenarios.json.
func Scenarios() ([]Scenario, error) { return ParseScenarios(scenariosJSON) }

// LoadScenarios reads a scenario file.
func LoadScenarios(path string) ([]Scenario, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return ParseScenarios(b)
}

// ParseScenarios decodes and checks scenarios; unknown fields are errors.
func ParseScenarios(data []byte) ([]Scenario, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var file struct {
		Scenarios []Scenario `json:"scenarios"`
	}
	if err := dec.Decode(&file); err != nil {
		return nil, fmt.Errorf("scenarios: %w", err)
	}
	names := map[string]bool{}
	for i, sc := range file.Scenarios {
		if err := sc.validate(); err != nil {
			return nil, fmt.Errorf("scenario %d (%s): %w", i+1, sc.Name, err)
		}
		if names[sc.Name] {
			return nil, fmt.Errorf("scenario %d: duplicate name %q", i+1, sc.Name)
		}
		names[sc.Name] = true
	}
	return file.Scenarios, nil
}

var scenarioName = regexp.MustCompile(`^[a-z0-9][a-z0-9-]*$`)

func (sc *Scenario) validate() error {
	if !scenarioName.MatchString(sc.Name) {
		return fmt.Errorf("name must be lowercase words joined by dashes")
	}
	if strings.TrimSpace(sc.Request) == "" {
		return fmt.Errorf("request is empty")
	}
	if sc.NegativeControl != (len(sc.MustFail) > 0) {
		return fmt.Errorf("a negative control, and only one, names the checks it must fail (must_fail)")
	}
	if err := validateTrajectory(sc.Trajectory); err != nil {
		return fmt.Errorf("trajectory: %w", err)
	}
	for _, o := range sc.Expect.Outcomes {
		if tool, outcome, ok := strings.Cut(o, ":"); !ok || tool == "" || outcome == "" {
			return fmt.Errorf("outcome %q: want tool:OUTCOME", o)
		}
	}
	for _, e := range sc.Events {
		if e.BeforeCall < 1 {
			return fmt.Errorf("event: before_call must be 1 or more")
		}
		for _, f := range e.Faults {
			if err := f.Validate(); err != nil {
				return fmt.Errorf("event fault: %w", err)
			}
		}
	}
	for k := range sc.Env {
		switch k {
		case "UPSTREAM_BASE_URL", "STORELINK_KEYRING", "STORELINK_KEYRING_FILE", "STATE_DB_PATH":
			return fmt.Errorf("env %s is set by the harness", k)
		}
	}
	return nil
}

// Find returns the scenario with the given name.
func Find(scenarios []Scenario, name string) (Scenario, bool) {
	for _, sc := range scenarios {
		if sc.Name == name {
			return sc, true
		}
	}
	return Scenario{}, false
}
