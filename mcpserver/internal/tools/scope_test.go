package tools

import (
	"errors"
	"log/slog"
	"slices"
	"strings"
	"testing"

	"github.com/korral/storelink/mcpserver/internal/apperr"
	"github.com/korral/storelink/mcpserver/internal/keyring"
	"github.com/korral/storelink/mcpserver/internal/oauth"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// An access token's storelink_stores narrows the keyring for its request;
// without the claim the whole keyring applies.
func TestStoreScopeOfAToken(t *testing.T) {
	kr := mustKeyring(t, `{"47":"k1","102":"k2","311":"k3"}`)
	s := &server{opts: Options{Keyring: func() *keyring.Keyring { return kr }}, log: slog.New(slog.DiscardHandler)}
	token := func(extra map[string]any) *mcp.RequestExtra {
		return &mcp.RequestExtra{TokenInfo: &auth.TokenInfo{UserID: "oauth:jana", Extra: extra}}
	}
	for name, extra := range map[string]*mcp.RequestExtra{
		"stdio":         nil,
		"file token":    token(map[string]any{"label": "dairy-agent"}),
		"without claim": token(map[string]any{"oauth": true}),
	} {
		if got := s.storesFor(extra).StoreIDs(); !slices.Equal(got, []string{"47", "102", "311"}) {
			t.Errorf("%s: %v", name, got)
		}
	}

	only47 := s.storesFor(token(map[string]any{"oauth": true, oauth.StoresClaim: []string{"47", "999"}}))
	if got := only47.StoreIDs(); !slices.Equal(got, []string{"47"}) {
		t.Fatalf("token for 47 (and a store the keyring lacks): %v", got)
	}
	if id, err := only47.Resolve(""); err != nil || id != "47" {
		t.Fatalf("one store in scope resolves an empty store_id: %q %v", id, err)
	}
	// 102 is in the keyring, 999 is not: the refusal reads the same, so it
	// does not tell which other stores the deployment serves.
	var msgs []string
	for _, id := range []string{"102", "999"} {
		_, err := only47.Resolve(id)
		var e *apperr.Error
		if !errors.As(err, &e) || e.Code != apperr.StoreNotAuthorized || !strings.Contains(e.Remediation, oauth.StoresClaim) {
			t.Fatalf("store %s for a token limited to 47: %v", id, err)
		}
		msgs = append(msgs, strings.ReplaceAll(e.Message+e.Remediation, id, "ID"))
	}
	if msgs[0] != msgs[1] {
		t.Fatalf("the refusals differ:\n%s\n%s", msgs[0], msgs[1])
	}

	none := s.storesFor(token(map[string]any{"oauth": true, oauth.StoresClaim: []string{}}))
	for _, id := range []string{"", "47"} {
		var e *apperr.Error
		if _, err := none.Resolve(id); !errors.As(err, &e) || e.Code != apperr.StoreNotAuthorized {
			t.Fatalf("store %q for a token limited to no store: %v", id, err)
		}
	}
}
