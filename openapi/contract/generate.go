package contract

import (
	"maps"
	"net/url"
)

// Phases of generated cases.
const (
	// PhaseData: boundary and negative values of constrained fields.
	PhaseData = "data"
	// PhaseAuth: no, unknown and other store's key on every operation.
	PhaseAuth = "auth"
	// PhaseMethod: methods the contract does not have for a path.
	PhaseMethod = "method"
	// PhaseContentType: the write with a body that is not declared JSON.
	PhaseContentType = "content-type"
	// PhaseChain: an operation, then the operation its response links to.
	PhaseChain = "chain"
)

// FindingGenerated: a generated case got an answer of the wrong class.
const FindingGenerated = "generated"

// Rule ids of the findings of generated cases; stable.
const (
	RuleNegativeAccepted    = "gen.negative.accepted"
	RuleNegativeStatus      = "gen.negative.status"
	RuleValidRefused        = "gen.valid.refused"
	RuleServerError         = "gen.server_error"
	RuleAuthIgnored         = "gen.auth.ignored"
	RuleAuthStatus          = "gen.auth.status"
	RuleMethodAccepted      = "gen.method.accepted"
	RuleContentTypeAccepted = "gen.content_type.accepted"
	RuleLinkStatus          = "gen.link.status"
)

// GeneratedRule is one rule of generated cases, with what it says.
type GeneratedRule struct {
	ID, Text string
}

// GeneratedRules lists the rules of generated cases, in the order the
// documentation lists them.
var GeneratedRules = []GeneratedRule{
	{RuleNegativeAccepted, "a request that breaks the contract's schema is refused, never answered with 2xx"},
	{RuleNegativeStatus, "a request that breaks the contract's schema is refused with 400"},
	{RuleValidRefused, "a request that keeps the contract's schema is never refused with 400"},
	{RuleServerError, "no generated request is answered with 5xx"},
	{RuleAuthIgnored, "a request without a key, with an unknown key, or with another store's key on a store's path, gets no data"},
	{RuleAuthStatus, "a missing or unknown key is 401 and another store's key on a store's path 403"},
	{RuleMethodAccepted, "a method the contract does not have for a path is refused with 4xx (405 preferred)"},
	{RuleContentTypeAccepted, "a write whose body is not declared application/json is refused with 4xx"},
	{RuleLinkStatus, "the operation a response links to (OpenAPI links) answers 200 for the ids the response names"},
}

// Expectations of a generated case.
const (
	expectValid           = "valid"           // keeps the schema, with a key that may read it
	expectInvalid         = "invalid"         // breaks the schema: 400
	expectUnauthenticated = "unauthenticated" // no or an unknown key: 401
	expectForbidden       = "forbidden"       // another store's key on a store's path: 403
	expectMethod          = "method"          // a method the path does not have: 4xx
	expectContentType     = "content-type"    // a body that is not declared JSON: 4xx
	expectLinked          = "linked"          // the second request of a chain: 200
)

// Key roles a case names; never the key itself.
const (
	roleOwn     = "own"
	roleOther   = "other"
	roleUnknown = "unknown"
	roleNone    = "none"
)

// DefaultGenerateMaxRequests is the request budget of a check with
// generated cases.
const DefaultGenerateMaxRequests = 600

// maxShrinkSteps bounds the requests spent shrinking one failing case.
const maxShrinkSteps = 8

// assumeUnknownKey is what an unknown-key case assumes.
const assumeUnknownKey = "that Korral IT never issued the key " + unknownKey

// Case is one generated request as the replay file keeps it; the key is
// named by role and store, never stored.
type Case struct {
	// ID numbers the case within its run, in the order it was sent.
	ID string `json:"id"`
	// Phase is one of the Phase* constants.
	Phase string `json:"phase"`
	// Operation is the operationId; empty for an undeclared method.
	Operation string `json:"operation_id,omitempty"`
	// Name says what the case varies, e.g. "query limit: maximum + 1".
	Name   string `json:"name"`
	Method string `json:"method"`
	// Path is the path sent, escaped.
	Path  string            `json:"path"`
	Query map[string]string `json:"query,omitempty"`
	// Body is the request body exactly as sent, when there is one.
	Body *string `json:"body,omitempty"`
	// ContentType is the Content-Type sent; empty sends none.
	ContentType string `json:"content_type,omitempty"`
	// Key is whose key is sent: own, other, unknown or none.
	Key string `json:"key"`
	// Store is the store whose key "own" means and "other" differs from.
	Store string `json:"store"`
	// Expect is the kind of request: valid, invalid, unauthenticated,
	// forbidden, method, content-type.
	Expect string `json:"expect"`
	// Assumption is what the case assumes beyond the contract.
	Assumption string `json:"assumption,omitempty"`
	// Then is the linked request of a chain.
	Then *LinkedCase `json:"then,omitempty"`
	// Rules are the rule ids or finding kinds the case failed with.
	Rules []string `json:"failed_rules,omitempty"`

	// Varies names what a data case varies, e.g. "query.limit".
	Varies string `json:"varies,omitempty"`
}

// LinkedCase is the second request of a chain, resolved against the first
// response.
type LinkedCase struct {
	// Link is the link's name in the contract.
	Link      string `json:"link"`
	Operation string `json:"operation_id"`
	Method    string `json:"method"`
	// PathTemplate is the operation's path template.
	PathTemplate string `json:"path_template"`
	// Parameters are the link's runtime expressions by parameter.
	Parameters map[string]string `json:"parameters"`
	// Status is the status of the first response the link belongs to.
	Status     int    `json:"status"`
	Assumption string `json:"assumption,omitempty"`
}

func (c *Case) target() string {
	if len(c.Query) == 0 {
		return c.Path
	}
	v := url.Values{}
	for k, s := range c.Query {
		v.Set(k, s)
	}
	return c.Path + "?" + v.Encode()
}

func (c *Case) body() []byte {
	if c.Body == nil {
		return nil
	}
	return []byte(*c.Body)
}

func (c *Case) clone() *Case {
	d := *c
	d.Query = maps.Clone(c.Query)
	if c.Body != nil {
		b := *c.Body
		d.Body = &b
	}
	return &d
}

// fingerprint is what makes two cases the same request.
func (c *Case) fingerprint() string {
	return c.Method + " " + c.target() + " " + string(c.body()) + " " + c.ContentType + " " + c.Key + " " + c.Store
}

func keyRole(role string) keyChoice {
	switch role {
	case roleOwn:
		return keyOwn
	case roleOther:
		return keyOther
	case roleUnknown:
		return keyUnknown
	}
	return keyNone
}

func strp(s string) *string { return &s }
