package e2etest

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
)

// Issuer is an OAuth authorization server on loopback: RFC 8414 metadata, a
// key set, and signed access tokens.
type Issuer struct {
	t         testing.TB
	srv       *httptest.Server
	reads     atomic.Int32 // key set requests
	abandoned atomic.Int32 // key set requests the server gave up while held
	down      atomic.Bool  // answer the key set with 503

	mu  sync.Mutex
	kid string
	alg jose.SignatureAlgorithm
	key crypto.Signer // the signing key, and the only one published
	// hold, when set, keeps every key set request waiting until it is
	// closed; entered receives one value per request held.
	hold, entered chan struct{}
}

// NewIssuer starts an issuer publishing one ES256 key, "k1".
func NewIssuer(t testing.TB) *Issuer {
	t.Helper()
	ec, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	i := &Issuer{t: t, kid: "k1", alg: jose.ES256, key: ec}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/oauth-authorization-server", i.metadata)
	mux.HandleFunc("GET /jwks", i.keySet)
	// Started only once i.srv is set: the handlers read it.
	i.srv = httptest.NewUnstartedServer(mux)
	i.srv.Start()
	t.Cleanup(i.srv.Close)
	return i
}

// URL is the issuer identifier.
func (i *Issuer) URL() string { return i.srv.URL }

// Reads is how many times the key set was requested.
func (i *Issuer) Reads() int32 { return i.reads.Load() }

// Abandoned is how many held key set requests the server gave up on.
func (i *Issuer) Abandoned() int32 { return i.abandoned.Load() }

// SetDown makes the key set answer 503 (down) or answer again.
func (i *Issuer) SetDown(down bool) { i.down.Store(down) }

func (i *Issuer) metadata(w http.ResponseWriter, _ *http.Request) {
	base := i.URL()
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{
		"issuer":                           base,
		"authorization_endpoint":           base + "/authorize",
		"token_endpoint":                   base + "/token",
		"jwks_uri":                         base + "/jwks",
		"response_types_supported":         []string{"code"},
		"grant_types_supported":            []string{"authorization_code", "refresh_token"},
		"code_challenge_methods_supported": []string{"S256"},
		"scopes_supported":                 []string{"storelink.read", "storelink.write"},
	})
}

func (i *Issuer) keySet(w http.ResponseWriter, r *http.Request) {
	i.reads.Add(1)
	i.mu.Lock()
	hold, entered := i.hold, i.entered
	i.mu.Unlock()
	if hold != nil {
		entered <- struct{}{}
		select {
		case <-hold:
		case <-r.Context().Done():
			i.abandoned.Add(1)
			return
		}
	}
	if i.down.Load() {
		http.Error(w, "down for maintenance", http.StatusServiceUnavailable)
		return
	}
	i.mu.Lock()
	k := jose.JSONWebKey{Key: i.key.Public(), KeyID: i.kid, Algorithm: string(i.alg), Use: "sig"}
	i.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{k}})
}

// Block makes the key set hang: every request for it waits (and is
// reported on entered) until release is called.
func (i *Issuer) Block() (entered <-chan struct{}, release func()) {
	i.mu.Lock()
	defer i.mu.Unlock()
	hold, in := make(chan struct{}), make(chan struct{}, 100)
	i.hold, i.entered = hold, in
	var once sync.Once
	release = func() {
		once.Do(func() {
			i.mu.Lock()
			i.hold, i.entered = nil, nil
			i.mu.Unlock()
			close(hold)
		})
	}
	i.t.Cleanup(release) // runs before the issuer's Close, which waits for handlers
	return in, release
}

// Rotate replaces the signing key by a new RSA key under kid and withdraws
// the old one from the key set.
func (i *Issuer) Rotate(kid string) {
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		i.t.Fatal(err)
	}
	i.mu.Lock()
	defer i.mu.Unlock()
	i.kid, i.alg, i.key = kid, jose.RS256, k
}

// Token signs an access token for audience (default: subject jana.novak,
// both scopes, five minutes). over replaces claims; nil removes one.
func (i *Issuer) Token(audience string, over map[string]any) string {
	i.mu.Lock()
	kid := i.kid
	i.mu.Unlock()
	return i.TokenWithKid(audience, kid, over)
}

// TokenWithKid is Token naming kid as its key, while signed with the
// current one.
func (i *Issuer) TokenWithKid(audience, kid string, over map[string]any) string {
	i.mu.Lock()
	key := jose.SigningKey{Algorithm: i.alg, Key: i.key}
	i.mu.Unlock()
	return i.sign(key, kid, audience, over)
}

// HMACSigned is a valid token's claims signed with HS256 under the kid
// "k1", as an attacker who treats a key as a shared secret would.
func (i *Issuer) HMACSigned(audience string) string {
	return i.sign(jose.SigningKey{Algorithm: jose.HS256, Key: []byte("a-shared-secret-of-32-characters")}, "k1", audience, nil)
}

func (i *Issuer) sign(key jose.SigningKey, kid, audience string, over map[string]any) string {
	i.t.Helper()
	now := time.Now()
	c := map[string]any{"iss": i.URL(), "aud": audience, "sub": "jana.novak", "iat": now.Unix(),
		"exp": now.Add(5 * time.Minute).Unix(), "scope": "storelink.read storelink.write", "client_id": "ts-sdk-host"}
	for k, v := range over {
		if v == nil {
			delete(c, k)
		} else {
			c[k] = v
		}
	}
	signer, err := jose.NewSigner(key, (&jose.SignerOptions{}).WithType("at+jwt").WithHeader("kid", kid))
	if err != nil {
		i.t.Fatal(err)
	}
	tok, err := jwt.Signed(signer).Claims(c).Serialize()
	if err != nil {
		i.t.Fatal(err)
	}
	return tok
}

// Unsigned is a token with alg "none": the claims a valid token carries,
// and no signature.
func (i *Issuer) Unsigned(audience string) string {
	payload := strings.Split(i.Token(audience, nil), ".")[1]
	header := base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"none","kid":"k1","typ":"at+jwt"}`))
	return header + "." + payload + "."
}
