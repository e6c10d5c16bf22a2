package oauth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/sync/singleflight"
)

// This file reads the provider's metadata (RFC 8414, else OpenID Connect)
// and key set, without following redirects. The set in use is immutable,
// re-read one at a time for an unknown key or an old set.

// keySet is one read of the provider's key set.
type keySet struct {
	jose.JSONWebKeySet
	// loaded is when it was read.
	loaded time.Time
}

// flightKey names the one read of the key set in the single flight.
const flightKey = "jwks"

// CheckURL accepts an https URL, or http to a loopback host, without
// query or fragment.
func CheckURL(raw string) error {
	u, err := url.Parse(raw)
	switch {
	case err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http"):
		return errors.New("want an absolute https URL, like https://login.korral.example/realms/buyers")
	case u.Scheme == "http" && !isLoopback(u.Hostname()):
		return fmt.Errorf("must use https; plain http is allowed only to a loopback host, not to %s", u.Hostname())
	case u.RawQuery != "" || u.Fragment != "" || u.User != nil:
		return errors.New("must have no query, fragment or user info")
	}
	return nil
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.IsLoopback()
}

// metadataURLs are the candidate metadata URLs: RFC 8414's, then OpenID
// Connect discovery's.
func metadataURLs(issuer string) []string {
	u, _ := url.Parse(issuer)
	path := strings.TrimSuffix(u.Path, "/")
	rfc := *u
	rfc.Path = "/.well-known/oauth-authorization-server" + path
	oidc := *u
	oidc.Path = path + "/.well-known/openid-configuration"
	return []string{rfc.String(), oidc.String()}
}

// discover reads the provider's metadata from the first well-known URI
// that has it and checks its issuer.
func (v *Verifier) discover(ctx context.Context) (*oauthex.AuthServerMeta, error) {
	var tried []string
	for _, u := range metadataURLs(v.issuer) {
		var meta oauthex.AuthServerMeta
		status, err := v.getJSON(ctx, u, &meta)
		if status == http.StatusNotFound || status == http.StatusGone {
			tried = append(tried, fmt.Sprintf("%s: HTTP %d", u, status))
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("issuer metadata %s: %w", u, err)
		}
		switch {
		case meta.Issuer != v.issuer:
			// RFC 8414 §3.3: metadata naming another issuer is not this issuer's.
			return nil, fmt.Errorf("issuer metadata %s names the issuer %q, not %q: set OAUTH_ISSUER to exactly the issuer the provider names", u, meta.Issuer, v.issuer)
		case meta.JWKSURI == "":
			return nil, fmt.Errorf("issuer metadata %s has no jwks_uri: the provider publishes no keys to check tokens with", u)
		}
		if err := CheckURL(meta.JWKSURI); err != nil {
			return nil, fmt.Errorf("issuer metadata %s: jwks_uri %s: %w", u, meta.JWKSURI, err)
		}
		return &meta, nil
	}
	return nil, fmt.Errorf("no issuer metadata found (%s): check OAUTH_ISSUER", strings.Join(tried, "; "))
}

// getJSON reads one JSON document into dst and returns the HTTP status
// (0 without one).
func (v *Verifier) getJSON(ctx context.Context, u string, dst any) (int, error) {
	ctx, cancel := context.WithTimeout(ctx, FetchTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return 0, err
	}
	req.Header.Set("Accept", "application/json")
	res, err := v.client.Do(req)
	if err != nil {
		return 0, err
	}
	defer res.Body.Close()
	if res.StatusCode >= 300 && res.StatusCode < 400 {
		return res.StatusCode, fmt.Errorf("HTTP %d redirect to %q not followed: configure the address that answers itself", res.StatusCode, res.Header.Get("Location"))
	}
	if res.StatusCode != http.StatusOK {
		return res.StatusCode, fmt.Errorf("HTTP %d", res.StatusCode)
	}
	if mt, _, err := mime.ParseMediaType(res.Header.Get("Content-Type")); err != nil || (mt != "application/json" && mt != "application/jwk-set+json") {
		return res.StatusCode, fmt.Errorf("content type %q, want application/json", res.Header.Get("Content-Type"))
	}
	body, err := io.ReadAll(io.LimitReader(res.Body, maxDocumentBytes+1))
	if err != nil {
		return res.StatusCode, err
	}
	if len(body) > maxDocumentBytes {
		return res.StatusCode, fmt.Errorf("document larger than %d bytes", maxDocumentBytes)
	}
	if err := json.Unmarshal(body, dst); err != nil {
		return res.StatusCode, fmt.Errorf("not JSON: %w", err)
	}
	return res.StatusCode, nil
}

// fetch reads the key set and keeps its usable keys.
func (v *Verifier) fetch(ctx context.Context) (*keySet, error) {
	var set jose.JSONWebKeySet
	if _, err := v.getJSON(ctx, v.jwksURI, &set); err != nil {
		return nil, fmt.Errorf("key set %s: %w", v.jwksURI, err)
	}
	usable := set.Keys[:0]
	for _, k := range set.Keys {
		// Only asymmetric public signing keys.
		if k.Valid() && k.IsPublic() && k.KeyID != "" && (k.Use == "" || k.Use == "sig") {
			usable = append(usable, k)
		}
	}
	if len(usable) == 0 {
		return nil, fmt.Errorf("key set %s holds no public signing key with a kid", v.jwksURI)
	}
	ids := make([]string, len(usable))
	for i, k := range usable {
		ids[i] = k.KeyID
	}
	v.log.Info("auth.oauth_keys_loaded", "jwks_uri", v.jwksURI, "kids", ids)
	return &keySet{JSONWebKeySet: jose.JSONWebKeySet{Keys: usable}, loaded: v.now()}, nil
}

// refetch returns the running key set read, or a new one unless one
// started within RefreshInterval (nil then). Reads finish without waiters.
func (v *Verifier) refetch(ctx context.Context) <-chan singleflight.Result {
	v.mu.Lock()
	defer v.mu.Unlock()
	if !v.fetching {
		now := v.now()
		if now.Sub(v.tried) < RefreshInterval {
			return nil
		}
		v.fetching, v.tried = true, now
	}
	// Started under mu, so a starting read is joined, never duplicated.
	return v.flight.DoChan(flightKey, func() (any, error) {
		ks, err := v.fetch(context.WithoutCancel(ctx))
		if err != nil {
			v.log.Warn("auth.oauth_keys_failed", "jwks_uri", v.jwksURI, "error", err.Error())
		} else {
			v.keys.Store(ks)
		}
		v.mu.Lock()
		v.fetching = false
		v.flight.Forget(flightKey)
		v.mu.Unlock()
		return ks, err
	})
}

// await waits for a read of the key set, for as long as ctx allows.
func await(ctx context.Context, ch <-chan singleflight.Result) (*keySet, error) {
	select {
	case r := <-ch:
		if r.Err != nil {
			return nil, &unavailable{fmt.Errorf("the provider's key set could not be read: %w", r.Err)}
		}
		return r.Val.(*keySet), nil
	case <-ctx.Done():
		return nil, &unavailable{fmt.Errorf("the provider's key set was still being read when the request ended: %w", ctx.Err())}
	}
}

// key returns the key kid names: at once from a set younger than
// KeysMaxAge (starting a background read from KeysRefreshAge), else after
// a read while ctx allows.
func (v *Verifier) key(ctx context.Context, kid string) (*jose.JSONWebKey, error) {
	ks := v.keys.Load()
	age := v.now().Sub(ks.loaded)
	if age >= KeysMaxAge {
		// Old keys are not used past their age: one may have been withdrawn.
		ch := v.refetch(ctx)
		if ch == nil {
			return nil, &unavailable{errors.New("the provider's key set is out of date and could not be read again yet")}
		}
		var err error
		if ks, err = await(ctx, ch); err != nil {
			return nil, err
		}
	} else if age >= KeysRefreshAge {
		_ = v.refetch(ctx) // in the background; nobody waits for it
	}
	if k := ks.Key(kid); len(k) > 0 {
		return &k[0], nil
	}
	// The set may have been replaced since it was loaded above.
	if cur := v.keys.Load(); cur != ks {
		if k := cur.Key(kid); len(k) > 0 {
			return &k[0], nil
		}
	}
	ch := v.refetch(ctx)
	if ch == nil {
		// Too soon for another read; one that ended since the check above
		// stored its set before it let refetch say so.
		if k := v.keys.Load().Key(kid); len(k) > 0 {
			return &k[0], nil
		}
		return nil, refuse("the token is signed with key %q, which the provider's key set does not hold", kid)
	}
	ks, err := await(ctx, ch)
	if err != nil {
		return nil, err
	}
	if k := ks.Key(kid); len(k) > 0 {
		return &k[0], nil
	}
	return nil, refuse("the token is signed with key %q, which the provider's key set does not hold", kid)
}
