package oauth

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	"github.com/modelcontextprotocol/go-sdk/auth"
)

const audience = "https://mcp.korral.example/mcp"

// provider is an identity provider on loopback whose documents a test
// shapes: where its metadata lives, what its key set holds.
type provider struct {
	t     *testing.T
	srv   *httptest.Server
	path  string // the issuer's path, e.g. /realms/buyers
	reads atomic.Int32

	mu sync.Mutex
	// oidcOnly serves the metadata at the OpenID Connect location only.
	oidcOnly bool
	// redirect answers the metadata with a redirect.
	redirect bool
	// metaIssuer overrides the issuer the metadata names.
	metaIssuer string
	// down answers the key set with 503.
	down bool
	// hold, when set, keeps every key set request waiting until it is
	// closed; entered receives one value per request that waits.
	hold, entered chan struct{}
	keys          []jose.JSONWebKey
	key           *ecdsa.PrivateKey
	kid           string
}

func newProvider(t *testing.T, path string) *provider {
	t.Helper()
	p := &provider{t: t, path: path}
	p.rotate("k1")
	mux := http.NewServeMux()
	meta := func(w http.ResponseWriter, r *http.Request, oidc bool) {
		p.mu.Lock()
		defer p.mu.Unlock()
		if p.oidcOnly != oidc {
			http.NotFound(w, r)
			return
		}
		if p.redirect {
			http.Redirect(w, r, "https://login.elsewhere.example/metadata", http.StatusFound)
			return
		}
		iss := p.issuer()
		if p.metaIssuer != "" {
			iss = p.metaIssuer
		}
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		_ = json.NewEncoder(w).Encode(map[string]any{"issuer": iss, "jwks_uri": p.issuer() + "/keys"})
	}
	mux.HandleFunc("GET /.well-known/oauth-authorization-server"+path, func(w http.ResponseWriter, r *http.Request) { meta(w, r, false) })
	mux.HandleFunc("GET "+path+"/.well-known/openid-configuration", func(w http.ResponseWriter, r *http.Request) { meta(w, r, true) })
	mux.HandleFunc("GET "+path+"/keys", func(w http.ResponseWriter, r *http.Request) {
		p.reads.Add(1)
		p.mu.Lock()
		hold, entered := p.hold, p.entered
		p.mu.Unlock()
		if hold != nil {
			entered <- struct{}{}
			<-hold
		}
		p.mu.Lock()
		defer p.mu.Unlock()
		if p.down {
			http.Error(w, "down", http.StatusServiceUnavailable)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(jose.JSONWebKeySet{Keys: p.keys})
	})
	p.srv = httptest.NewServer(mux)
	t.Cleanup(p.srv.Close)
	return p
}

func (p *provider) issuer() string { return p.srv.URL + p.path }

// block makes the key set hang: every request to it waits (and is
// reported on entered) until release is called.
func (p *provider) block() (entered <-chan struct{}, release func()) {
	p.mu.Lock()
	defer p.mu.Unlock()
	hold, in := make(chan struct{}), make(chan struct{}, 100)
	p.hold, p.entered = hold, in
	var once sync.Once
	release = func() {
		once.Do(func() {
			p.mu.Lock()
			p.hold, p.entered = nil, nil
			p.mu.Unlock()
			close(hold)
		})
	}
	p.t.Cleanup(release) // before the server's Close, which waits for handlers
	return in, release
}

// rotate makes a new ES256 key the only published one.
func (p *provider) rotate(kid string) {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		p.t.Fatal(err)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.key, p.kid = k, kid
	p.keys = []jose.JSONWebKey{{Key: k.Public(), KeyID: kid, Algorithm: "ES256", Use: "sig"}}
}

func (p *provider) token(c map[string]any) string {
	p.t.Helper()
	p.mu.Lock()
	key, kid := p.key, p.kid
	p.mu.Unlock()
	s, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.ES256, Key: key}, (&jose.SignerOptions{}).WithHeader("kid", kid))
	if err != nil {
		p.t.Fatal(err)
	}
	tok, err := jwt.Signed(s).Claims(c).Serialize()
	if err != nil {
		p.t.Fatal(err)
	}
	return tok
}

// clock is a settable time.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

func verifier(t *testing.T, p *provider, clk *clock) *Verifier {
	t.Helper()
	v, err := New(context.Background(), Options{Issuer: p.issuer(), Audience: audience, Now: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func claimsAt(p *provider, now time.Time) map[string]any {
	return map[string]any{"iss": p.issuer(), "aud": audience, "sub": "jana.novak", "iat": now.Unix(),
		"exp": now.Add(5 * time.Minute).Unix(), "scope": "storelink.read"}
}

func TestDiscoveryFindsTheKeysOfAnIssuerWithAPath(t *testing.T) {
	for _, oidc := range []bool{false, true} {
		p := newProvider(t, "/realms/buyers")
		p.oidcOnly = oidc
		clk := &clock{now: time.Now()}
		v := verifier(t, p, clk)
		if v.JWKSURI() != p.issuer()+"/keys" {
			t.Fatalf("oidc=%v: jwks_uri %s", oidc, v.JWKSURI())
		}
		tok, err := v.Verify(context.Background(), p.token(claimsAt(p, clk.Now())))
		if err != nil || tok.Caller() != "oauth:jana.novak" || !tok.Has(ScopeRead) || tok.Has(ScopeWrite) {
			t.Fatalf("oidc=%v: %+v %v", oidc, tok, err)
		}
	}
}

func TestDiscoveryRefusesWhatIsNotTheIssuers(t *testing.T) {
	p := newProvider(t, "")
	p.redirect = true
	if _, err := New(context.Background(), Options{Issuer: p.issuer(), Audience: audience}); err == nil || !strings.Contains(err.Error(), "not followed") {
		t.Fatalf("redirected metadata: %v", err)
	}
	p.redirect, p.metaIssuer = false, "https://login.elsewhere.example"
	if _, err := New(context.Background(), Options{Issuer: p.issuer(), Audience: audience}); err == nil || !strings.Contains(err.Error(), "names the issuer") {
		t.Fatalf("metadata of another issuer: %v", err)
	}
	p.metaIssuer = ""
	p.keys = []jose.JSONWebKey{{Key: []byte("a-shared-secret-of-32-characters"), KeyID: "hs", Algorithm: "HS256"}}
	if _, err := New(context.Background(), Options{Issuer: p.issuer(), Audience: audience}); err == nil || !strings.Contains(err.Error(), "no public signing key") {
		t.Fatalf("a key set of one symmetric key: %v", err)
	}
	if _, err := New(context.Background(), Options{Issuer: "http://login.korral.example", Audience: audience}); err == nil || !strings.Contains(err.Error(), "https") {
		t.Fatalf("plain http off loopback: %v", err)
	}
}

// The skew is bounded on both sides: ClockSkew past exp (or before nbf)
// is accepted, a second more is not.
func TestClockSkewIsBounded(t *testing.T) {
	p := newProvider(t, "")
	clk := &clock{now: time.Now().Truncate(time.Second)}
	v := verifier(t, p, clk)
	issued := clk.Now()
	c := claimsAt(p, issued)
	c["nbf"] = issued.Add(ClockSkew).Unix()
	c["iat"] = issued.Unix()
	tok := p.token(c)
	if _, err := v.Verify(context.Background(), tok); err != nil {
		t.Fatalf("nbf ClockSkew ahead: %v", err)
	}
	c["nbf"] = issued.Add(ClockSkew + time.Second).Unix()
	if _, err := v.Verify(context.Background(), p.token(c)); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "not valid before") {
		t.Fatalf("nbf beyond the skew: %v", err)
	}
	clk.add(5*time.Minute + ClockSkew)
	if _, err := v.Verify(context.Background(), tok); err != nil {
		t.Fatalf("ClockSkew after exp: %v", err)
	}
	clk.add(time.Second)
	if _, err := v.Verify(context.Background(), tok); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "expired") {
		t.Fatalf("beyond the skew after exp: %v", err)
	}
}

// A withdrawn key stops working once the key set is KeysMaxAge old, even
// without a token naming a new key.
func TestAWithdrawnKeyStopsWorkingWithinKeysMaxAge(t *testing.T) {
	p := newProvider(t, "")
	clk := &clock{now: time.Now()}
	v := verifier(t, p, clk)
	old := p.token(map[string]any{"iss": p.issuer(), "aud": audience, "sub": "a", "exp": clk.Now().Add(3 * time.Hour).Unix()})
	p.rotate("k2")
	if _, err := v.Verify(context.Background(), old); err != nil {
		t.Fatalf("within KeysMaxAge the cached key still verifies: %v", err)
	}
	clk.add(KeysMaxAge)
	if _, err := v.Verify(context.Background(), old); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), `"k1"`) {
		t.Fatalf("after KeysMaxAge: %v", err)
	}
}

// Concurrent tokens naming a new key cause one read of the key set.
func TestANewKeyIsFetchedOnceForConcurrentTokens(t *testing.T) {
	p := newProvider(t, "")
	clk := &clock{now: time.Now()}
	v := verifier(t, p, clk)
	p.rotate("k2")
	tok := p.token(claimsAt(p, clk.Now()))
	before := p.reads.Load()
	var wg sync.WaitGroup
	errs := make(chan error, 20)
	for range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := v.Verify(context.Background(), tok)
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if n := p.reads.Load() - before; n != 1 {
		t.Fatalf("%d reads of the key set, want 1", n)
	}
}

func TestScopesFromScopeOrScp(t *testing.T) {
	p := newProvider(t, "")
	clk := &clock{now: time.Now()}
	v := verifier(t, p, clk)
	for _, scp := range []any{[]string{"storelink.read", "storelink.write"}, "storelink.read storelink.write"} {
		c := claimsAt(p, clk.Now())
		delete(c, "scope")
		c["scp"] = scp
		tok, err := v.Verify(context.Background(), p.token(c))
		if err != nil || !tok.Has(ScopeRead) || !tok.Has(ScopeWrite) {
			t.Fatalf("scp %v: %+v %v", scp, tok, err)
		}
	}
	c := claimsAt(p, clk.Now())
	c["sub"] = "jana/../admin"
	if _, err := v.Verify(context.Background(), p.token(c)); !errors.Is(err, ErrInvalid) {
		t.Fatalf("a subject with a slash: %v", err)
	}
}

func TestMetadataURL(t *testing.T) {
	for in, want := range map[string]string{
		"https://mcp.korral.example/mcp": "https://mcp.korral.example/.well-known/oauth-protected-resource/mcp",
		"https://mcp.korral.example":     "https://mcp.korral.example/.well-known/oauth-protected-resource",
		"https://mcp.korral.example/":    "https://mcp.korral.example/.well-known/oauth-protected-resource",
	} {
		if got, err := MetadataURL(in); err != nil || got != want {
			t.Errorf("MetadataURL(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
}

// A provider that is down when the key set is due is asked once per
// RefreshInterval, however many tokens arrive, and not trusted meanwhile.
func TestADownProviderIsAskedOncePerInterval(t *testing.T) {
	p := newProvider(t, "")
	clk := &clock{now: time.Now()}
	v := verifier(t, p, clk)
	tok := p.token(map[string]any{"iss": p.issuer(), "aud": audience, "sub": "a", "exp": clk.Now().Add(3 * time.Hour).Unix()})
	p.mu.Lock()
	p.down = true
	p.mu.Unlock()
	clk.add(KeysMaxAge)
	before := p.reads.Load()
	for range 5 {
		if _, err := v.Verify(context.Background(), tok); !errors.Is(err, ErrUnavailable) || errors.Is(err, ErrInvalid) {
			t.Fatalf("with the provider down: %v", err)
		}
	}
	if n := p.reads.Load() - before; n != 1 {
		t.Fatalf("%d reads of a down provider's key set, want 1", n)
	}
	p.mu.Lock()
	p.down = false
	p.mu.Unlock()
	clk.add(RefreshInterval)
	if _, err := v.Verify(context.Background(), tok); err != nil {
		t.Fatalf("the provider is back: %v", err)
	}
}

// The issue: while a token naming an unknown key waits for a key set read
// that hangs, tokens whose key is in the set are checked without waiting
// for it; the waiting token is then refused (401), not failed. No timing:
// the valid checks must all end while the provider still holds the read.
func TestAValidKeyNeverWaitsForAKeySetRead(t *testing.T) {
	p := newProvider(t, "")
	clk := &clock{now: time.Now()}
	v := verifier(t, p, clk)
	valid := p.token(claimsAt(p, clk.Now()))
	// Valid claims signed by k1, but naming a key the set does not hold.
	made := withKid(t, p, "made-up")
	entered, release := p.block()
	before := p.reads.Load()

	unknown := make(chan error, 1)
	go func() {
		_, err := v.Verify(context.Background(), made)
		unknown <- err
	}()
	<-entered // the read for the unknown key is hanging at the provider

	var wg sync.WaitGroup
	errs := make(chan error, 20)
	for range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := v.Verify(context.Background(), valid)
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatalf("a token with a known key, while the key set read hangs: %v", err)
		}
	}
	select {
	case err := <-unknown:
		t.Fatalf("the unknown key's check ended before the read did: %v", err)
	default:
	}
	release()
	if err := <-unknown; !errors.Is(err, ErrInvalid) {
		t.Fatalf("the unknown key after the read: %v, want a refusal", err)
	}
	if n := p.reads.Load() - before; n != 1 {
		t.Fatalf("%d key set reads, want 1", n)
	}
}

// A token naming an unknown key waits no longer than its own request: when
// its context ends, it gives up (unavailable, not refused), while the read
// goes on for whoever comes next.
func TestAnUnknownKeyWaitsOnlyAsLongAsItsRequest(t *testing.T) {
	p := newProvider(t, "")
	clk := &clock{now: time.Now()}
	v := verifier(t, p, clk)
	entered, release := p.block()
	p.rotate("k2")
	tok := p.token(claimsAt(p, clk.Now()))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := v.Verify(ctx, tok)
		done <- err
	}()
	<-entered
	cancel()
	if err := <-done; !errors.Is(err, ErrUnavailable) || errors.Is(err, ErrInvalid) {
		t.Fatalf("the request ended while the read hung: %v", err)
	}
	// Another token for k2 joins the same read; once it ends, k2 verifies
	// without a second read.
	before := p.reads.Load()
	again := make(chan error, 1)
	go func() {
		_, err := v.Verify(context.Background(), tok)
		again <- err
	}()
	release()
	if err := <-again; err != nil {
		t.Fatalf("after the read: %v", err)
	}
	if n := p.reads.Load() - before; n != 0 {
		t.Fatalf("%d more key set reads, want 0 (the running read is joined)", n)
	}
}

// A provider that cannot be read when a token names an unknown key makes
// that token unavailable (try again), not invalid.
func TestAnUnknownKeyWithTheProviderDownIsUnavailable(t *testing.T) {
	p := newProvider(t, "")
	clk := &clock{now: time.Now()}
	v := verifier(t, p, clk)
	p.rotate("k2")
	p.mu.Lock()
	p.down = true
	p.mu.Unlock()
	tok := p.token(claimsAt(p, clk.Now()))
	if _, err := v.Verify(context.Background(), tok); !errors.Is(err, ErrUnavailable) || errors.Is(err, ErrInvalid) {
		t.Fatalf("provider down: %v", err)
	}
	// Within RefreshInterval the provider is not asked again: the token is
	// refused for its key, as any made-up key is.
	if _, err := v.Verify(context.Background(), tok); !errors.Is(err, ErrInvalid) {
		t.Fatalf("right after: %v", err)
	}
}

// From KeysRefreshAge the set is read again in the background: the token
// that notices does not wait for it, and a key published meanwhile is
// known afterwards without a read of its own.
func TestTheKeySetIsRenewedInTheBackground(t *testing.T) {
	p := newProvider(t, "")
	clk := &clock{now: time.Now()}
	v := verifier(t, p, clk)
	clk.add(KeysRefreshAge)
	old := p.token(claimsAt(p, clk.Now()))
	entered, release := p.block()
	before := p.reads.Load()
	for range 5 {
		if _, err := v.Verify(context.Background(), old); err != nil {
			t.Fatalf("a known key while the set is renewed: %v", err)
		}
	}
	<-entered // the renewal is hanging; every check above ended without it
	// Publish k2 beside k1, then let the renewal finish.
	p.mu.Lock()
	k1 := p.keys[0]
	p.mu.Unlock()
	p.rotate("k2")
	p.mu.Lock()
	p.keys = append(p.keys, k1)
	p.mu.Unlock()
	release()
	// Wait for the renewal to land: its outcome is shared through the flight.
	if ch := v.refetch(context.Background()); ch != nil {
		<-ch
	}
	if n := p.reads.Load() - before; n != 1 {
		t.Fatalf("%d key set reads, want 1", n)
	}
	if _, err := v.Verify(context.Background(), p.token(claimsAt(p, clk.Now()))); err != nil {
		t.Fatalf("k2 after the renewal: %v", err)
	}
	if n := p.reads.Load() - before; n != 1 {
		t.Fatalf("%d key set reads after k2, want 1", n)
	}
}

// withKid signs valid claims with the provider's key under another kid.
func withKid(t *testing.T, p *provider, kid string) string {
	t.Helper()
	p.mu.Lock()
	key := p.key
	p.mu.Unlock()
	s, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.ES256, Key: key}, (&jose.SignerOptions{}).WithHeader("kid", kid))
	if err != nil {
		t.Fatal(err)
	}
	tok, err := jwt.Signed(s).Claims(claimsAt(p, time.Now())).Serialize()
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

func TestStoresClaim(t *testing.T) {
	p := newProvider(t, "")
	clk := &clock{now: time.Now()}
	v := verifier(t, p, clk)
	for name, c := range map[string]struct {
		claim   any
		stores  []string
		limited bool
	}{
		"absent":       {nil, nil, false},
		"empty":        {[]string{}, []string{}, true},
		"one":          {[]string{"47"}, []string{"47"}, true},
		"with repeats": {[]string{"102", "47", "102"}, []string{"102", "47"}, true},
	} {
		cl := claimsAt(p, clk.Now())
		if c.claim != nil {
			cl[StoresClaim] = c.claim
		}
		tok, err := v.Verify(context.Background(), p.token(cl))
		if err != nil || tok.StoresLimited != c.limited || fmt.Sprint(tok.Stores) != fmt.Sprint(c.stores) {
			t.Errorf("%s: %+v %v", name, tok, err)
		}
	}
	for name, claim := range map[string]any{
		"null":           json.RawMessage("null"),
		"a string":       "47",
		"a number":       []any{47},
		"not a store id": []string{"47", "all"},
		"an object":      map[string]any{"47": true},
	} {
		cl := claimsAt(p, clk.Now())
		cl[StoresClaim] = claim
		if _, err := v.Verify(context.Background(), p.token(cl)); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), StoresClaim) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func TestTokenStores(t *testing.T) {
	if ids, limited := TokenStores(nil); ids != nil || limited {
		t.Fatal("nil TokenInfo")
	}
	if _, limited := TokenStores(&auth.TokenInfo{Extra: map[string]any{"label": "x"}}); limited {
		t.Fatal("a file token is not limited")
	}
	if ids, limited := TokenStores(&auth.TokenInfo{Extra: map[string]any{StoresClaim: []string{}}}); !limited || len(ids) != 0 {
		t.Fatal("an empty claim limits to no store")
	}
}
