package app

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/korral/storelink/mcpserver/internal/keyring"
)

// EmbeddedFunc starts a StoreLink inside the process. fixedNow, when not
// zero, pins its clock (and the server's). A binary supplies it; this
// module never imports the mock (ADR 0015).
type EmbeddedFunc func(ctx context.Context, fixedNow time.Time) (*EmbeddedUpstream, error)

// EmbeddedUpstream is a running in-process StoreLink.
type EmbeddedUpstream struct {
	BaseURL string
	// Keyring maps store ids to keys, as STORELINK_KEYRING would.
	Keyring map[string]string
	Close   func() error
}

func keyringFromMap(m map[string]string) (*keyring.Keyring, error) {
	data, err := json.Marshal(m)
	if err != nil {
		return nil, err
	}
	return keyring.Parse(data)
}

// KeyringStores are the store ids of the configured keyring, or of the
// embedded demo StoreLink's; what names the command in the refusal.
func (a *App) KeyringStores(ctx context.Context, what string) ([]string, error) {
	if kr := a.cfg.Keyring; kr != nil {
		return kr.StoreIDs(), nil
	}
	if a.cfg.UpstreamBaseURL != "" || a.opts.Embedded == nil {
		return nil, exit2(fmt.Errorf("%s needs the keyring to check the ids against: set STORELINK_KEYRING_FILE (or STORELINK_KEYRING), or omit --stores for every store", what))
	}
	emb, err := a.opts.Embedded(ctx, time.Time{})
	if err != nil {
		return nil, fmt.Errorf("start embedded StoreLink: %w", err)
	}
	defer emb.Close()
	kr, err := keyringFromMap(emb.Keyring)
	if err != nil {
		return nil, err
	}
	return kr.StoreIDs(), nil
}
