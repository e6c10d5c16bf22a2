package oauth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/modelcontextprotocol/go-sdk/auth"

	"github.com/korral/storelink/mcpserver/internal/mcptest"
)

const audience = "https://mcp.korral.example/mcp"

func verifier(t *testing.T, p *mcptest.Issuer, clk *mcptest.Clock) *Verifier {
	t.Helper()
	v, err := New(context.Background(), Options{Issuer: p.URL(), Audience: audience, Now: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// verifyAtOnce verifies tok from n goroutines at once and returns the
// first error.
func verifyAtOnce(v *Verifier, tok string, n int) error {
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for range n {
		wg.Go(func() {
			_, err := v.Verify(context.Background(), tok)
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

func claimsAt(p *mcptest.Issuer, now time.Time) map[string]any {
	return map[string]any{"iss": p.URL(), "aud": audience, "sub": "jana.novak", "iat": now.Unix(),
		"exp": now.Add(5 * time.Minute).Unix(), "scope": "storelink.read"}
}

func TestDiscoveryFindsTheKeysOfAnIssuerWithAPath(t *testing.T) {
	for _, oidc := range []bool{false, true} {
		p := mcptest.NewIssuer(t, "/realms/buyers")
		p.Set(func(s *mcptest.IssuerSettings) { s.OIDCOnly = oidc })
		clk := mcptest.NewClock(time.Now())
		v := verifier(t, p, clk)
		if v.JWKSURI() != p.URL()+"/keys" {
			t.Fatalf("oidc=%v: jwks_uri %s", oidc, v.JWKSURI())
		}
		tok, err := v.Verify(context.Background(), p.Token(claimsAt(p, clk.Now())))
		if err != nil || tok.Caller() != "oauth:jana.novak" || !tok.Has(ScopeRead) || tok.Has(ScopeWrite) {
			t.Fatalf("oidc=%v: %+v %v", oidc, tok, err)
		}
	}
}

func TestDiscoveryRefusesWhatIsNotTheIssuers(t *testing.T) {
	p := mcptest.NewIssuer(t, "")
	p.Set(func(s *mcptest.IssuerSettings) { s.Redirect = true })
	if _, err := New(context.Background(), Options{Issuer: p.URL(), Audience: audience}); err == nil || !strings.Contains(err.Error(), "not followed") {
		t.Fatalf("redirected metadata: %v", err)
	}
	p.Set(func(s *mcptest.IssuerSettings) { s.Redirect, s.MetaIssuer = false, "https://login.elsewhere.example" })
	if _, err := New(context.Background(), Options{Issuer: p.URL(), Audience: audience}); err == nil || !strings.Contains(err.Error(), "names the issuer") {
		t.Fatalf("metadata of another issuer: %v", err)
	}
	p.Set(func(s *mcptest.IssuerSettings) {
		s.MetaIssuer = ""
		s.Keys = []jose.JSONWebKey{{Key: []byte("a-shared-secret-of-32-characters"), KeyID: "hs", Algorithm: "HS256"}}
	})
	if _, err := New(context.Background(), Options{Issuer: p.URL(), Audience: audience}); err == nil || !strings.Contains(err.Error(), "no public signing key") {
		t.Fatalf("a key set of one symmetric key: %v", err)
	}
	if _, err := New(context.Background(), Options{Issuer: "http://login.korral.example", Audience: audience}); err == nil || !strings.Contains(err.Error(), "https") {
		t.Fatalf("plain http off loopback: %v", err)
	}
}

// ClockSkew past exp (or before nbf) is accepted, a second more is not.
func TestClockSkewIsBounded(t *testing.T) {
	p := mcptest.NewIssuer(t, "")
	clk := mcptest.NewClock(time.Now().Truncate(time.Second))
	v := verifier(t, p, clk)
	issued := clk.Now()
	c := claimsAt(p, issued)
	c["nbf"] = issued.Add(ClockSkew).Unix()
	c["iat"] = issued.Unix()
	tok := p.Token(c)
	if _, err := v.Verify(context.Background(), tok); err != nil {
		t.Fatalf("nbf ClockSkew ahead: %v", err)
	}
	c["nbf"] = issued.Add(ClockSkew + time.Second).Unix()
	if _, err := v.Verify(context.Background(), p.Token(c)); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "not valid before") {
		t.Fatalf("nbf beyond the skew: %v", err)
	}
	clk.Advance(5*time.Minute + ClockSkew)
	if _, err := v.Verify(context.Background(), tok); err != nil {
		t.Fatalf("ClockSkew after exp: %v", err)
	}
	clk.Advance(time.Second)
	if _, err := v.Verify(context.Background(), tok); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "expired") {
		t.Fatalf("beyond the skew after exp: %v", err)
	}
}

// A withdrawn key stops working once the key set is KeysMaxAge old.
func TestAWithdrawnKeyStopsWorkingWithinKeysMaxAge(t *testing.T) {
	p := mcptest.NewIssuer(t, "")
	clk := mcptest.NewClock(time.Now())
	v := verifier(t, p, clk)
	old := p.Token(map[string]any{"iss": p.URL(), "aud": audience, "sub": "a", "exp": clk.Now().Add(3 * time.Hour).Unix()})
	p.Rotate("k2")
	if _, err := v.Verify(context.Background(), old); err != nil {
		t.Fatalf("within KeysMaxAge the cached key still verifies: %v", err)
	}
	clk.Advance(KeysMaxAge)
	if _, err := v.Verify(context.Background(), old); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), `"k1"`) {
		t.Fatalf("after KeysMaxAge: %v", err)
	}
}

// Concurrent tokens naming a new key cause one read of the key set.
func TestANewKeyIsFetchedOnceForConcurrentTokens(t *testing.T) {
	p := mcptest.NewIssuer(t, "")
	clk := mcptest.NewClock(time.Now())
	v := verifier(t, p, clk)
	p.Rotate("k2")
	tok := p.Token(claimsAt(p, clk.Now()))
	before := p.Reads()
	if err := verifyAtOnce(v, tok, 20); err != nil {
		t.Fatal(err)
	}
	if n := p.Reads() - before; n != 1 {
		t.Fatalf("%d reads of the key set, want 1", n)
	}
}

func TestScopesFromScopeOrScp(t *testing.T) {
	p := mcptest.NewIssuer(t, "")
	clk := mcptest.NewClock(time.Now())
	v := verifier(t, p, clk)
	for _, scp := range []any{[]string{"storelink.read", "storelink.write"}, "storelink.read storelink.write"} {
		c := claimsAt(p, clk.Now())
		delete(c, "scope")
		c["scp"] = scp
		tok, err := v.Verify(context.Background(), p.Token(c))
		if err != nil || !tok.Has(ScopeRead) || !tok.Has(ScopeWrite) {
			t.Fatalf("scp %v: %+v %v", scp, tok, err)
		}
	}
	c := claimsAt(p, clk.Now())
	c["sub"] = "jana/../admin"
	if _, err := v.Verify(context.Background(), p.Token(c)); !errors.Is(err, ErrInvalid) {
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

// A provider that is down is asked once per RefreshInterval, however many
// tokens arrive.
func TestADownProviderIsAskedOncePerInterval(t *testing.T) {
	p := mcptest.NewIssuer(t, "")
	clk := mcptest.NewClock(time.Now())
	v := verifier(t, p, clk)
	tok := p.Token(map[string]any{"iss": p.URL(), "aud": audience, "sub": "a", "exp": clk.Now().Add(3 * time.Hour).Unix()})
	p.Set(func(s *mcptest.IssuerSettings) { s.Down = true })
	clk.Advance(KeysMaxAge)
	before := p.Reads()
	for range 5 {
		if _, err := v.Verify(context.Background(), tok); !errors.Is(err, ErrUnavailable) || errors.Is(err, ErrInvalid) {
			t.Fatalf("with the provider down: %v", err)
		}
	}
	if n := p.Reads() - before; n != 1 {
		t.Fatalf("%d reads of a down provider's key set, want 1", n)
	}
	p.Set(func(s *mcptest.IssuerSettings) { s.Down = false })
	clk.Advance(RefreshInterval)
	if _, err := v.Verify(context.Background(), tok); err != nil {
		t.Fatalf("the provider is back: %v", err)
	}
}

// While a token naming an unknown key waits for a hanging key set read,
// tokens with known keys are checked without waiting; the waiting token is
// then refused (401).
func TestAValidKeyNeverWaitsForAKeySetRead(t *testing.T) {
	p := mcptest.NewIssuer(t, "")
	clk := mcptest.NewClock(time.Now())
	v := verifier(t, p, clk)
	valid := p.Token(claimsAt(p, clk.Now()))
	// Valid claims signed by k1, but naming a key the set does not hold.
	made := p.TokenWithKid(claimsAt(p, time.Now()), "made-up")
	entered, release := p.Block()
	before := p.Reads()

	unknown := make(chan error, 1)
	go func() {
		_, err := v.Verify(context.Background(), made)
		unknown <- err
	}()
	<-entered // the read for the unknown key is hanging at the provider

	if err := verifyAtOnce(v, valid, 20); err != nil {
		t.Fatalf("a token with a known key, while the key set read hangs: %v", err)
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
	if n := p.Reads() - before; n != 1 {
		t.Fatalf("%d key set reads, want 1", n)
	}
}

// A token naming an unknown key gives up when its context ends
// (unavailable), while the read goes on for the next caller.
func TestAnUnknownKeyWaitsOnlyAsLongAsItsRequest(t *testing.T) {
	p := mcptest.NewIssuer(t, "")
	clk := mcptest.NewClock(time.Now())
	v := verifier(t, p, clk)
	entered, release := p.Block()
	p.Rotate("k2")
	tok := p.Token(claimsAt(p, clk.Now()))
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
	// Another token for k2 joins the same read.
	before := p.Reads()
	again := make(chan error, 1)
	go func() {
		_, err := v.Verify(context.Background(), tok)
		again <- err
	}()
	release()
	if err := <-again; err != nil {
		t.Fatalf("after the read: %v", err)
	}
	if n := p.Reads() - before; n != 0 {
		t.Fatalf("%d more key set reads, want 0 (the running read is joined)", n)
	}
}

// An unreadable provider makes a token with an unknown key unavailable,
// not invalid.
func TestAnUnknownKeyWithTheProviderDownIsUnavailable(t *testing.T) {
	p := mcptest.NewIssuer(t, "")
	clk := mcptest.NewClock(time.Now())
	v := verifier(t, p, clk)
	p.Rotate("k2")
	p.Set(func(s *mcptest.IssuerSettings) { s.Down = true })
	tok := p.Token(claimsAt(p, clk.Now()))
	if _, err := v.Verify(context.Background(), tok); !errors.Is(err, ErrUnavailable) || errors.Is(err, ErrInvalid) {
		t.Fatalf("provider down: %v", err)
	}
	// Within RefreshInterval the provider is not asked again.
	if _, err := v.Verify(context.Background(), tok); !errors.Is(err, ErrInvalid) {
		t.Fatalf("right after: %v", err)
	}
}

// From KeysRefreshAge the set is re-read in the background; the token
// that triggers it does not wait.
func TestTheKeySetIsRenewedInTheBackground(t *testing.T) {
	p := mcptest.NewIssuer(t, "")
	clk := mcptest.NewClock(time.Now())
	v := verifier(t, p, clk)
	clk.Advance(KeysRefreshAge)
	old := p.Token(claimsAt(p, clk.Now()))
	entered, release := p.Block()
	before := p.Reads()
	for range 5 {
		if _, err := v.Verify(context.Background(), old); err != nil {
			t.Fatalf("a known key while the set is renewed: %v", err)
		}
	}
	<-entered // the renewal is hanging; every check above ended without it
	// Publish k2 beside k1, then let the renewal finish.
	var k1 jose.JSONWebKey
	p.Set(func(s *mcptest.IssuerSettings) { k1 = s.Keys[0] })
	p.Rotate("k2")
	p.Set(func(s *mcptest.IssuerSettings) { s.Keys = append(s.Keys, k1) })
	release()
	// Wait for the renewal to land.
	if ch := v.refetch(context.Background()); ch != nil {
		<-ch
	}
	if n := p.Reads() - before; n != 1 {
		t.Fatalf("%d key set reads, want 1", n)
	}
	if _, err := v.Verify(context.Background(), p.Token(claimsAt(p, clk.Now()))); err != nil {
		t.Fatalf("k2 after the renewal: %v", err)
	}
	if n := p.Reads() - before; n != 1 {
		t.Fatalf("%d key set reads after k2, want 1", n)
	}
}

func TestStoresClaim(t *testing.T) {
	p := mcptest.NewIssuer(t, "")
	clk := mcptest.NewClock(time.Now())
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
		tok, err := v.Verify(context.Background(), p.Token(cl))
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
		if _, err := v.Verify(context.Background(), p.Token(cl)); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), StoresClaim) {
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
