package mcpserver

import (
	"github.com/google/jsonschema-go/jsonschema"
	"github.com/korral/storelink/mcpserver/internal/apperr"
)

// Shared argument shapes. Patterns mirror the StoreLink contract so a value
// StoreLink would refuse is refused here, before any request exists.
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

// resolveStore applies the keyring's scope rules and records the store on the
// call. It never reaches the network: a store without a key is refused here.
func (s *server) resolveStore(c *call, storeID string) (string, error) {
	kr := s.opts.Keyring()
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
