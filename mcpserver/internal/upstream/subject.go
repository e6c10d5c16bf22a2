package upstream

import (
	"context"
	"fmt"
	"regexp"

	"github.com/korral/storelink/mcpserver/internal/apperr"
)

// subject is what a request asks StoreLink about, so that an error names the
// SKU, order or supplier and the store instead of the route.
type subject struct {
	storeID string
	sku     string
	// kind is what the request reads when it is not a SKU at the store:
	// "store", "catalog" (a SKU's catalog record), "order" or "supplier".
	kind string
	id   string
}

type subjectKey struct{}

// about returns ctx carrying the SKU, order or supplier a request asks for;
// the endpoints set it, fail reads it (the store id is fail's own argument).
// The context is one allocation: it holds the subject itself rather than a
// boxed copy, as context.WithValue would.
func about(ctx context.Context, s subject) context.Context {
	return &subjectCtx{Context: ctx, s: s}
}

// subjectCtx is ctx with a subject.
type subjectCtx struct {
	context.Context
	s subject
}

// Value returns the *subjectCtx for subjectKey and asks the parent for any
// other key.
func (c *subjectCtx) Value(key any) any {
	if key == (subjectKey{}) {
		return c
	}
	return c.Context.Value(key)
}

// subjectOf is the subject ctx carries, with storeID.
func subjectOf(ctx context.Context, storeID string) subject {
	var s subject
	if c, ok := ctx.Value(subjectKey{}).(*subjectCtx); ok {
		s = c.s
	}
	s.storeID = storeID
	return s
}

// plainID admits ids that are safe to quote in a message; anything else
// (a supplier id from StoreLink, say) is left out rather than quoted.
var plainID = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._:~-]{0,127}$`)

// store is "store 47", or "the store" when the store is not known.
func (s subject) store() string {
	if !plainID.MatchString(s.storeID) {
		return "the store"
	}
	return "store " + s.storeID
}

// notFound is StoreLink's 404 in words: what it does not have, and where.
func notFound(where string, s subject, cause error) *apperr.Error {
	msg := fmt.Sprintf("StoreLink has no such record (%s)", where)
	fix := "Check the id or SKU code; do not guess another one."
	store := plainID.MatchString(s.storeID)
	switch {
	case s.kind == "store" && store:
		msg = fmt.Sprintf("StoreLink has no store %s", s.storeID)
		fix = "Use a store listed by korral_list_authorized_stores; if it is listed, the operator must fix the keyring."
	case s.kind == "catalog" && plainID.MatchString(s.sku):
		msg = fmt.Sprintf("StoreLink has no SKU %s", s.sku)
		fix = "Check the SKU code with the buyer; do not guess another one."
	case plainID.MatchString(s.sku) && store:
		msg = fmt.Sprintf("StoreLink has no SKU %s at store %s", s.sku, s.storeID)
		fix = "Check the SKU code and the store with the buyer; do not guess another one."
	case s.kind == "order" && plainID.MatchString(s.id) && store:
		msg = fmt.Sprintf("StoreLink has no order %s at store %s", s.id, s.storeID)
		fix = "Check the order id and the store it was raised at; do not guess another id."
	case s.kind == "supplier" && plainID.MatchString(s.id):
		msg = fmt.Sprintf("StoreLink has no supplier %s", s.id)
		fix = "StoreLink's SKU record names a supplier it does not have: report it to Korral IT with the call id."
	}
	return apperr.Wrap(apperr.NotFound, cause, msg, fix)
}
