package storelinkclient_test

import (
	"context"
	"net/http"
	"testing"

	sl "github.com/korral/storelink/storelinkclient"
)

// TestStoreKeyEditorSharesNothingARequestCanChange: the key's header
// value is shared by the requests an editor authenticates, so a header
// added to one request must not reach another.
func TestStoreKeyEditorSharesNothingARequestCanChange(t *testing.T) {
	edit := sl.WithStoreKey("key-47")
	first, _ := http.NewRequest(http.MethodGet, "http://storelink.test/v1/stores/47", nil)
	if err := edit(context.Background(), first); err != nil {
		t.Fatal(err)
	}
	first.Header.Add(sl.StoreKeyHeader, "another")
	second, _ := http.NewRequest(http.MethodGet, "http://storelink.test/v1/stores/47", nil)
	if err := edit(context.Background(), second); err != nil {
		t.Fatal(err)
	}
	if got := second.Header.Values(sl.StoreKeyHeader); len(got) != 1 || got[0] != "key-47" {
		t.Fatalf("second request's key header %q, want only key-47", got)
	}
	second.Header.Add(sl.StoreKeyHeader, "third")
	if got := first.Header.Values(sl.StoreKeyHeader); len(got) != 2 || got[0] != "key-47" || got[1] != "another" {
		t.Fatalf("first request's key header %q, want key-47 and another", got)
	}
}
