package tools

import (
	"errors"
	"fmt"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/korral/storelink/mcpserver/internal/apperr"
	"github.com/korral/storelink/mcpserver/internal/keyring"
	"github.com/korral/storelink/mcpserver/internal/oauth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Shared argument shapes, mirroring the StoreLink contract's patterns.
const (
	skuPattern     = "^[0-9]{4,14}$"
	storeIDPattern = "^[0-9]{1,6}$"
	orderIDPattern = "^[A-Za-z0-9][A-Za-z0-9-]{0,63}$"
)

func shapeSKU(props map[string]*jsonschema.Schema) {
	props["sku"].Pattern = skuPattern
}

func shapeStoreID(props map[string]*jsonschema.Schema) {
	props["store_id"].Pattern = storeIDPattern
}

// resolveStore applies the keyring's scope rules, narrowed to the caller's
// stores, and records the store on the call. It never reaches the network.
func (s *server) resolveStore(c *call, storeID string) (string, error) {
	kr := s.callStores(c)
	if kr == nil {
		return "", apperr.New(apperr.InternalError, "no keyring loaded", "")
	}
	id, err := kr.Resolve(storeID)
	if err != nil {
		return "", err
	}
	c.storeID = id
	return id, nil
}

// storeScope is the keyring one request may use: the deployment's, or the
// stores an access token's storelink_stores claim names (ADR 0008).
type storeScope struct {
	*keyring.Keyring
	// limited is true when an access token narrowed the keyring.
	limited bool
}

// storesFor returns the store scope of a request (nil without a keyring):
// the verified token's stores over HTTP, else the whole keyring.
func (s *server) storesFor(extra *mcp.RequestExtra) *storeScope {
	kr := s.opts.Keyring()
	if kr == nil {
		return nil
	}
	if extra != nil {
		if ids, limited := oauth.TokenStores(extra.TokenInfo); limited {
			return &storeScope{Keyring: kr.Narrow(ids), limited: true}
		}
	}
	return &storeScope{Keyring: kr}
}

// callStores is the store scope of a tool call.
func (s *server) callStores(c *call) *storeScope {
	if c == nil || c.req == nil {
		return s.storesFor(nil)
	}
	return s.storesFor(c.req.Extra)
}

// Resolve applies the keyring's rules within the scope. For a limited token
// a store outside it is refused in the same words whether or not the
// keyring holds it, revealing no other stores.
func (sc *storeScope) Resolve(storeID string) (string, error) {
	if sc.limited && sc.Len() == 0 {
		return "", apperr.New(apperr.StoreNotAuthorized,
			"your access token may use no store of this deployment",
			"Do not retry. Access to a store is granted by the identity provider: ask for an access token whose "+oauth.StoresClaim+" names it.")
	}
	id, err := sc.Keyring.Resolve(storeID)
	var e *apperr.Error
	if err != nil && sc.limited && errors.As(err, &e) && e.Code == apperr.StoreNotAuthorized {
		ids := sc.StoreIDs()
		list := strings.Join(ids[:min(len(ids), 20)], ", ")
		if len(ids) > 20 {
			list += fmt.Sprintf(" and %d more", len(ids)-20)
		}
		return "", apperr.New(apperr.StoreNotAuthorized,
			fmt.Sprintf("store %s is not among the stores your access token may use (%s)", storeID, list),
			fmt.Sprintf("Use one of %s (see korral_list_authorized_stores); access to store %s is granted by the identity provider: ask for an access token whose %s includes it.", list, storeID, oauth.StoresClaim))
	}
	return id, err
}
