package keyring

import (
	"errors"
	"slices"
	"testing"

	"github.com/korral/storelink/mcpserver/internal/apperr"
)

func TestNarrow(t *testing.T) {
	kr, err := Parse([]byte(`{"47":"key-forty-seven-0001","102":"key-one-oh-two-00002","311":"key-three-eleven-003"}`))
	if err != nil {
		t.Fatal(err)
	}
	n := kr.Narrow([]string{"311", "47", "999", "47"})
	if got := n.StoreIDs(); !slices.Equal(got, []string{"47", "311"}) {
		t.Fatalf("narrowed ids %v", got)
	}
	if k, ok := n.Key("47"); !ok || !k.Equal(mustKey(t, kr, "47")) {
		t.Fatal("a narrowed store keeps its key")
	}
	var e *apperr.Error
	if _, err := n.Resolve("102"); !errors.As(err, &e) || e.Code != apperr.StoreNotAuthorized {
		t.Fatalf("a store left out: %v", err)
	}
	if _, err := n.Resolve("999"); !errors.As(err, &e) || e.Code != apperr.StoreNotAuthorized {
		t.Fatalf("a store the keyring never held: %v", err)
	}
	if id, err := kr.Narrow([]string{"102"}).Resolve(""); err != nil || id != "102" {
		t.Fatalf("one store left resolves an empty id: %q %v", id, err)
	}
	if empty := kr.Narrow(nil); empty.Len() != 0 {
		t.Fatalf("no ids: %v", empty.StoreIDs())
	}
	if kr.Len() != 3 {
		t.Fatal("the keyring itself is unchanged")
	}
}

func mustKey(t *testing.T, kr *Keyring, id string) Key {
	t.Helper()
	k, ok := kr.Key(id)
	if !ok {
		t.Fatal(id)
	}
	return k
}
