package replenish

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/korral/storelink/mcpserver/internal/apperr"
	"github.com/korral/storelink/mcpserver/internal/callid"
	"github.com/korral/storelink/mcpserver/internal/domain"
	"github.com/korral/storelink/mcpserver/internal/state"
	"github.com/korral/storelink/mcpserver/internal/state/journal"
)

// OrderReader is the part of the upstream adapter that reads an order.
type OrderReader interface {
	Order(ctx context.Context, storeID, orderID string) (domain.Order, error)
}

// ConfirmOrders confirms the journal's accepted orders by reading them back
// from StoreLink upstreamID. A missing or different order is a refusal
// (journal.NotConfirmedError); an unreachable StoreLink leaves the line.
func ConfirmOrders(up OrderReader, upstreamID string) journal.Confirmer {
	return journal.ConfirmFunc(func(ctx context.Context, e state.Entry, orderID string) error {
		if e.UpstreamID != "" && e.UpstreamID != upstreamID {
			return &journal.NotConfirmedError{Reason: fmt.Sprintf("the entry was sent to the StoreLink at %s, and this process reads orders from %s", e.UpstreamID, dash(upstreamID))}
		}
		o, err := up.Order(ctx, e.StoreID, orderID)
		if err != nil {
			ae := apperr.From(err)
			if ae.Code == apperr.NotFound {
				return &journal.NotConfirmedError{Reason: fmt.Sprintf("StoreLink answered that store %s holds no order %s (%s)", e.StoreID, orderID, ae.Code)}
			}
			return fmt.Errorf("order %s could not be read at StoreLink (%s: %s)", orderID, ae.Code, ae.Message)
		}
		var diffs []string
		if o.ID != orderID {
			diffs = append(diffs, "StoreLink answered with order "+o.ID)
		}
		if o.StoreID != e.StoreID {
			diffs = append(diffs, fmt.Sprintf("its store is %s, the entry's %s", o.StoreID, e.StoreID))
		}
		if o.SKU != e.SKU {
			diffs = append(diffs, fmt.Sprintf("its SKU is %s, the entry's %s", o.SKU, e.SKU))
		}
		if o.QuantityUnits != e.QuantityUnits {
			diffs = append(diffs, fmt.Sprintf("it is for %d unit(s), the entry for %d", o.QuantityUnits, e.QuantityUnits))
		}
		if earliest := e.CreatedAt.Add(-resolveClockSkew); !o.SubmittedAt.IsZero() && o.SubmittedAt.Before(earliest) {
			diffs = append(diffs, fmt.Sprintf("StoreLink says it was submitted at %s, before the entry was created at %s", o.SubmittedAt.UTC().Format(time.RFC3339), e.CreatedAt.UTC().Format(time.RFC3339)))
		}
		if len(diffs) > 0 {
			return &journal.NotConfirmedError{Reason: fmt.Sprintf("StoreLink's order %s is not this entry's order: %s", orderID, strings.Join(diffs, "; "))}
		}
		return nil
	})
}

// embeddedPrefix begins the identity of an embedded StoreLink.
const embeddedPrefix = "embedded:"

// UpstreamIdentity names a StoreLink for the ledger: its base URL without
// user info, query or trailing slash, or for the embedded mock (baseURL "")
// a name of its own.
func UpstreamIdentity(baseURL string) string {
	if baseURL == "" {
		return embeddedPrefix + callid.New()
	}
	u, err := url.Parse(baseURL)
	if err != nil {
		return baseURL
	}
	u.User, u.RawQuery, u.Fragment = nil, "", ""
	u.Scheme, u.Host = strings.ToLower(u.Scheme), strings.ToLower(u.Host)
	return strings.TrimRight(u.String(), "/")
}

// IsEmbedded reports whether an identity names an embedded StoreLink.
func IsEmbedded(upstreamID string) bool { return strings.HasPrefix(upstreamID, embeddedPrefix) }

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
