// Package oauth makes `serve --http` an OAuth 2.1 resource server: it checks
// the JWT access tokens of an identity provider and publishes the protected
// resource metadata (RFC 9728). Cryptography is go-jose's (ADR 0008); this
// package reads no environment variable.
package oauth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/sync/singleflight"
)

// Scopes of this server. Every MCP request needs ScopeRead; a call of a tool
// that writes needs ScopeWrite as well.
const (
	ScopeRead  = "storelink.read"
	ScopeWrite = "storelink.write"
)

// SubjectPrefix starts the caller name of a token's subject ("oauth:SUB").
// Token file labels hold no colon, so the two kinds of caller never clash.
const SubjectPrefix = "oauth:"

// Limits of the checks and of the traffic to the provider.
const (
	// ClockSkew is the tolerated clock difference for exp, nbf and iat.
	ClockSkew = 60 * time.Second
	// RefreshInterval is the shortest time between two key set reads.
	RefreshInterval = 30 * time.Second
	// KeysMaxAge is how long a key set is used at most.
	KeysMaxAge = time.Hour
	// KeysRefreshAge is the age from which a check starts a background
	// read.
	KeysRefreshAge = KeysMaxAge / 2
	// FetchTimeout bounds one request to the provider.
	FetchTimeout = 10 * time.Second
	// maxDocumentBytes bounds the metadata and the key set read.
	maxDocumentBytes = 1 << 20
	// MaxTokenBytes bounds a token before it is parsed.
	MaxTokenBytes = 16 << 10
	// maxSubjectLen bounds the subject recorded as the caller.
	maxSubjectLen = 200
)

// Algorithms are the accepted signature algorithms: asymmetric ones only,
// so "none" and HMAC-signed tokens are refused before any key is looked at.
var Algorithms = []jose.SignatureAlgorithm{
	jose.RS256, jose.RS384, jose.RS512,
	jose.PS256, jose.PS384, jose.PS512,
	jose.ES256, jose.ES384, jose.ES512,
	jose.EdDSA,
}

// ErrInvalid is wrapped by every refusal of a token.
var ErrInvalid = errors.New("invalid access token")

// ErrUnavailable is wrapped by every failure to check a token because the
// key set could not be read: the token may be good, and the caller should
// retry (HTTP 503, not 401).
var ErrUnavailable = errors.New("the identity provider's key set is unavailable")

// unavailable wraps the cause and ErrUnavailable.
type unavailable struct{ err error }

func (u *unavailable) Error() string        { return u.err.Error() }
func (u *unavailable) Unwrap() error        { return u.err }
func (u *unavailable) Is(target error) bool { return target == ErrUnavailable }

// refusal is a refused token's reason, safe to show; never the token.
type refusal struct{ reason string }

func (r *refusal) Error() string        { return "invalid access token: " + r.reason }
func (r *refusal) Is(target error) bool { return target == ErrInvalid }

func refuse(format string, args ...any) error {
	return &refusal{reason: fmt.Sprintf(format, args...)}
}

// Reason is the refusal's reason without its prefix, or err's text.
func Reason(err error) string {
	var r *refusal
	if errors.As(err, &r) {
		return r.reason
	}
	return err.Error()
}

// Token is what a verified access token says about its holder.
type Token struct {
	// Subject is the token's sub claim.
	Subject string
	// Scopes are the scopes granted (scope or scp claim).
	Scopes []string
	// Expiry is the token's exp.
	Expiry time.Time
	// ClientID is the client_id or azp claim, when present.
	ClientID string
	// Stores are the distinct store ids of storelink_stores, when
	// StoresLimited.
	Stores []string
	// StoresLimited is true when the token carries storelink_stores (an
	// empty list allows no store).
	StoresLimited bool
}

// StoresClaim limits a token to some keyring stores: ["47", "102"].
const StoresClaim = "storelink_stores"

// TokenStores reports the stores a verified token may use, as recorded in
// ti.Extra under StoresClaim, and whether the token is limited at all (false:
// the whole keyring). A TokenInfo of a token file has no such entry.
func TokenStores(ti *auth.TokenInfo) (ids []string, limited bool) {
	if ti == nil {
		return nil, false
	}
	ids, limited = ti.Extra[StoresClaim].([]string)
	return ids, limited
}

// Caller is the name the ledger and the audit trail record for the holder.
func (t *Token) Caller() string { return SubjectPrefix + t.Subject }

// Has reports whether the token grants scope.
func (t *Token) Has(scope string) bool { return slices.Contains(t.Scopes, scope) }

// Options configure a Verifier. Issuer and Audience are required.
type Options struct {
	// Issuer is the provider's issuer identifier, compared exactly.
	Issuer string
	// Audience is this server's resource identifier, required in aud.
	Audience string
	// Client reaches the provider; nil uses a client with FetchTimeout.
	// Redirects are never followed.
	Client *http.Client
	// Now is the clock; nil is time.Now.
	Now func() time.Time
	// Logger receives key set reloads; nil discards them.
	Logger *slog.Logger
}

// Verifier checks access tokens of one provider for one resource; safe
// for concurrent use.
type Verifier struct {
	issuer, audience string
	jwksURI          string
	client           *http.Client
	now              func() time.Time
	log              *slog.Logger

	// keys is the key set in use, replaced whole after each good read.
	keys atomic.Pointer[keySet]
	// flight runs one read of the key set at a time.
	flight singleflight.Group
	// mu guards the fields below and is never held across a read.
	mu sync.Mutex
	// fetching is true while a read runs; tried is when the last started.
	fetching bool
	tried    time.Time
}

// New reads the provider's metadata and key set, failing early on a
// wrong issuer or an unreachable provider.
func New(ctx context.Context, o Options) (*Verifier, error) {
	if o.Issuer == "" || o.Audience == "" {
		return nil, errors.New("oauth: Options.Issuer and Options.Audience are required")
	}
	if err := CheckURL(o.Issuer); err != nil {
		return nil, fmt.Errorf("issuer %s: %w", o.Issuer, err)
	}
	v := &Verifier{issuer: o.Issuer, audience: o.Audience, now: o.Now, log: o.Logger}
	if v.now == nil {
		v.now = time.Now
	}
	if v.log == nil {
		v.log = slog.New(slog.DiscardHandler)
	}
	c := http.Client{Timeout: FetchTimeout}
	if o.Client != nil {
		c = *o.Client
	}
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	v.client = &c

	meta, err := v.discover(ctx)
	if err != nil {
		return nil, err
	}
	v.jwksURI = meta.JWKSURI
	ks, err := v.fetch(ctx)
	if err != nil {
		return nil, err
	}
	v.keys.Store(ks)
	return v, nil
}

// Audience is this server's resource identifier.
func (v *Verifier) Audience() string { return v.audience }

// JWKSURI is where the provider's key set is read.
func (v *Verifier) JWKSURI() string { return v.jwksURI }

// claims are the token's claims besides the registered ones.
type claims struct {
	Scope    string          `json:"scope"`
	Scp      json.RawMessage `json:"scp"`
	ClientID string          `json:"client_id"`
	Azp      string          `json:"azp"`
	Stores   json.RawMessage `json:"storelink_stores"`
}

// Verify checks a token: algorithm, signature, iss, aud, exp, nbf and iat
// (within ClockSkew), and subject. Refusals wrap ErrInvalid; any other
// error means the key set could not be read.
func (v *Verifier) Verify(ctx context.Context, raw string) (*Token, error) {
	if len(raw) > MaxTokenBytes {
		return nil, refuse("the token is longer than %d bytes", MaxTokenBytes)
	}
	tok, err := jwt.ParseSigned(raw, Algorithms)
	if err != nil {
		return nil, refuse("not a JWT signed with an accepted algorithm (%s)", algList())
	}
	if len(tok.Headers) != 1 {
		return nil, refuse("the token must carry exactly one signature")
	}
	h := tok.Headers[0]
	if h.KeyID == "" {
		return nil, refuse("the token names no signing key (kid)")
	}
	key, err := v.key(ctx, h.KeyID)
	if err != nil {
		return nil, err
	}
	if key.Algorithm != "" && key.Algorithm != h.Algorithm {
		return nil, refuse("key %q is for %s, the token says %s", h.KeyID, key.Algorithm, h.Algorithm)
	}
	var std jwt.Claims
	var more claims
	if err := tok.Claims(key.Key, &std, &more); err != nil {
		return nil, refuse("the signature does not verify with key %q", h.KeyID)
	}
	switch {
	case std.Issuer != v.issuer:
		return nil, refuse("issued by %q, not by %q", std.Issuer, v.issuer)
	case !oauthex.MatchesResource(std.Audience, v.audience):
		return nil, refuse("issued for another resource (aud %q), not for %q", []string(std.Audience), v.audience)
	case std.Expiry == nil:
		return nil, refuse("the token has no expiry (exp)")
	}
	now := v.now()
	if err := std.ValidateWithLeeway(jwt.Expected{Time: now}, ClockSkew); err != nil {
		switch {
		case errors.Is(err, jwt.ErrExpired):
			return nil, refuse("expired at %s", std.Expiry.Time().UTC().Format(time.RFC3339))
		case errors.Is(err, jwt.ErrNotValidYet):
			return nil, refuse("not valid before %s", std.NotBefore.Time().UTC().Format(time.RFC3339))
		case errors.Is(err, jwt.ErrIssuedInTheFuture):
			return nil, refuse("issued in the future (iat %s)", std.IssuedAt.Time().UTC().Format(time.RFC3339))
		}
		return nil, refuse("%v", err)
	}
	if err := checkSubject(std.Subject); err != nil {
		return nil, err
	}
	t := &Token{Subject: std.Subject, Expiry: std.Expiry.Time(), Scopes: scopes(more), ClientID: more.ClientID}
	if t.ClientID == "" {
		t.ClientID = more.Azp
	}
	if more.Stores != nil {
		if t.Stores, err = stores(more.Stores); err != nil {
			return nil, err
		}
		t.StoresLimited = true
	}
	return t, nil
}

// storeIDRE is a store id as the keyring holds them.
var storeIDRE = regexp.MustCompile(`^[0-9]{1,6}$`)

// stores reads storelink_stores, a JSON array of store ids. Anything else
// refuses the token, so an unreadable restriction never grants the whole
// keyring.
func stores(raw json.RawMessage) ([]string, error) {
	var ids []string
	if s := strings.TrimSpace(string(raw)); !strings.HasPrefix(s, "[") || json.Unmarshal(raw, &ids) != nil {
		return nil, refuse("%s must be a JSON array of store ids, like [\"47\"]", StoresClaim)
	}
	out := make([]string, 0, len(ids))
	for _, id := range ids {
		if !storeIDRE.MatchString(id) {
			return nil, refuse("%s holds %q, which is not a store id (1 to 6 digits)", StoresClaim, bound(id, 16))
		}
		if !slices.Contains(out, id) {
			out = append(out, id)
		}
	}
	return out, nil
}

// bound cuts s to n bytes for a message, marking the cut.
func bound(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

func algList() string {
	s := make([]string, len(Algorithms))
	for i, a := range Algorithms {
		s[i] = string(a)
	}
	return strings.Join(s, ", ")
}

// checkSubject accepts a subject usable as a ledger caller name: printable
// ASCII without spaces or slashes (the caller is followed by " (client)" and
// "/session"), bounded in length.
func checkSubject(sub string) error {
	if sub == "" {
		return refuse("the token has no subject (sub)")
	}
	if len(sub) > maxSubjectLen {
		return refuse("the subject is longer than %d characters", maxSubjectLen)
	}
	for i := 0; i < len(sub); i++ {
		if c := sub[i]; c <= ' ' || c > '~' || c == '/' {
			return refuse("the subject holds a character other than printable ASCII without space or slash")
		}
	}
	return nil
}

// scopes reads the granted scopes: the space-separated scope claim (RFC 9068)
// or scp, as a string or a list.
func scopes(c claims) []string {
	out := strings.Fields(c.Scope)
	if len(c.Scp) > 0 {
		var list []string
		var one string
		if json.Unmarshal(c.Scp, &list) == nil {
			out = append(out, list...)
		} else if json.Unmarshal(c.Scp, &one) == nil {
			out = append(out, strings.Fields(one)...)
		}
	}
	return out
}

// WellKnownPath is RFC 9728's well-known URI suffix.
const WellKnownPath = "/.well-known/oauth-protected-resource"

// MetadataURL is where the metadata of resource is published (RFC 9728
// §3.1): the well-known path inserted between its host and its path.
func MetadataURL(resource string) (string, error) {
	u, err := url.Parse(resource)
	if err != nil || u.Host == "" {
		return "", fmt.Errorf("resource %q is not an absolute URL", resource)
	}
	u.Path = WellKnownPath + strings.TrimSuffix(u.Path, "/")
	u.RawPath = ""
	return u.String(), nil
}

// Metadata is the protected resource metadata of this server.
func (v *Verifier) Metadata() *oauthex.ProtectedResourceMetadata {
	return &oauthex.ProtectedResourceMetadata{
		Resource:               v.audience,
		AuthorizationServers:   []string{v.issuer},
		ScopesSupported:        []string{ScopeRead, ScopeWrite},
		BearerMethodsSupported: []string{"header"},
		ResourceName:           "Korral StoreLink MCP server",
	}
}
