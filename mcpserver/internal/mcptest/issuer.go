package mcptest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
)

// Issuer is a loopback OAuth authorization server: it serves metadata and
// a key set and signs tokens with its own ES256 key.
type Issuer struct {
	t     testing.TB
	srv   *httptest.Server
	path  string
	reads atomic.Int32

	mu  sync.Mutex
	set IssuerSettings
	key *ecdsa.PrivateKey
	kid string
	// hold, when set, keeps key set requests waiting until closed; entered
	// gets one value per waiting request.
	hold, entered chan struct{}
}

// IssuerSettings are what the issuer serves; a test changes them with Set.
type IssuerSettings struct {
	OIDCOnly   bool              // metadata only at the OpenID Connect location
	Redirect   bool              // metadata answered with a redirect elsewhere
	MetaIssuer string            // the issuer the metadata names, if not this one
	Down       bool              // the key set answered with 503
	Keys       []jose.JSONWebKey // the published key set
}

// NewIssuer starts an issuer identified by its URL plus path, with key "k1".
func NewIssuer(t testing.TB, path string) *Issuer {
	t.Helper()
	i := &Issuer{t: t, path: path}
	i.Rotate("k1")
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/oauth-authorization-server"+path, func(w http.ResponseWriter, r *http.Request) { i.meta(w, r, false) })
	mux.HandleFunc("GET "+path+"/.well-known/openid-configuration", func(w http.ResponseWriter, r *http.Request) { i.meta(w, r, true) })
	mux.HandleFunc("GET "+path+"/keys", i.keys)
	i.srv = httptest.NewServer(mux)
	t.Cleanup(i.srv.Close)
	return i
}

// URL is the issuer identifier.
func (i *Issuer) URL() string { return i.srv.URL + i.path }

// Reads is how many times the key set was requested.
func (i *Issuer) Reads() int32 { return i.reads.Load() }

// Set changes what the issuer serves.
func (i *Issuer) Set(change func(*IssuerSettings)) {
	i.mu.Lock()
	defer i.mu.Unlock()
	change(&i.set)
}

func (i *Issuer) meta(w http.ResponseWriter, r *http.Request, oidc bool) {
	i.mu.Lock()
	defer i.mu.Unlock()
	if i.set.OIDCOnly != oidc {
		http.NotFound(w, r)
		return
	}
	if i.set.Redirect {
		http.Redirect(w, r, "https://login.elsewhere.example/metadata", http.StatusFound)
		return
	}
	iss := i.URL()
	if i.set.MetaIssuer != "" {
		iss = i.set.MetaIssuer
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	_ = json.NewEncoder(w).Encode(map[string]any{"issuer": iss, "jwks_uri": i.URL() + "/keys"})
}

func (i *Issuer) keys(w http.ResponseWriter, _ *http.Request) {
	i.reads.Add(1)
	i.mu.Lock()
	hold, entered := i.hold, i.entered
	i.mu.Unlock()
	if hold != nil {
		entered <- struct{}{}
		<-hold
	}
	i.mu.Lock()
	defer i.mu.Unlock()
	if i.set.Down {
		http.Error(w, "down", http.StatusServiceUnavailable)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(jose.JSONWebKeySet{Keys: i.set.Keys})
}

// Block makes key set requests wait (reported on entered) until release.
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
	i.t.Cleanup(release) // before the server's Close, which waits for handlers
	return in, release
}

// Rotate makes a new ES256 key under kid the only signing and published key.
func (i *Issuer) Rotate(kid string) {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		i.t.Fatal(err)
	}
	i.mu.Lock()
	defer i.mu.Unlock()
	i.key, i.kid = k, kid
	i.set.Keys = []jose.JSONWebKey{{Key: k.Public(), KeyID: kid, Algorithm: "ES256", Use: "sig"}}
}

// Token signs claims with the current key.
func (i *Issuer) Token(claims map[string]any) string {
	i.t.Helper()
	i.mu.Lock()
	kid := i.kid
	i.mu.Unlock()
	return i.TokenWithKid(claims, kid)
}

// TokenWithKid signs claims with the current key but names kid as its key.
func (i *Issuer) TokenWithKid(claims map[string]any, kid string) string {
	i.t.Helper()
	i.mu.Lock()
	key := i.key
	i.mu.Unlock()
	s, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.ES256, Key: key}, (&jose.SignerOptions{}).WithHeader("kid", kid))
	if err != nil {
		i.t.Fatal(err)
	}
	tok, err := jwt.Signed(s).Claims(claims).Serialize()
	if err != nil {
		i.t.Fatal(err)
	}
	return tok
}
