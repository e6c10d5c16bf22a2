package keyring

import (
	"encoding/json"
	"fmt"
	"testing"
)

// chainKeyring is a keyring with a key for every one of the chain's stores,
// the largest a deployment holds.
func chainKeyring(b *testing.B) ([]byte, *Keyring) {
	b.Helper()
	m := map[string]string{}
	for i := 1; i <= 180; i++ {
		m[fmt.Sprint(i)] = fmt.Sprintf("sl_live_%04d_8f3e2a9c41d7b6e05a", i)
	}
	data, err := json.Marshal(m)
	if err != nil {
		b.Fatal(err)
	}
	kr, err := Parse(data)
	if err != nil {
		b.Fatal(err)
	}
	return data, kr
}

// BenchmarkResolve measures the scoping decision every tool call makes
// before anything is sent upstream.
func BenchmarkResolve(b *testing.B) {
	single, err := Parse([]byte(`{"47":"sl_live_0047_8f3e2a9c41d7b6e05a"}`))
	if err != nil {
		b.Fatal(err)
	}
	_, chain := chainKeyring(b)
	cases := []struct {
		name    string
		kr      *Keyring
		storeID string
		wantErr bool
	}{
		{"one-store-implicit", single, "", false},
		{"chain-explicit", chain, "102", false},
		{"chain-missing-id", chain, "", true},
		{"chain-not-authorized", chain, "999", true},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_, err := c.kr.Resolve(c.storeID)
				if (err != nil) != c.wantErr {
					b.Fatalf("Resolve(%q): %v", c.storeID, err)
				}
			}
		})
	}
}

// BenchmarkKeyLookup is the per-request step of the upstream adapter: find
// the store's key and reveal it for the request header.
func BenchmarkKeyLookup(b *testing.B) {
	_, chain := chainKeyring(b)
	b.ReportAllocs()
	for b.Loop() {
		k, ok := chain.Key("102")
		if !ok || k.Reveal() == "" {
			b.Fatal("no key for store 102")
		}
	}
}

// BenchmarkParseChain is the cost of loading (or re-reading after a
// rotation) a keyring for all 180 stores.
func BenchmarkParseChain(b *testing.B) {
	data, _ := chainKeyring(b)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse(data); err != nil {
			b.Fatal(err)
		}
	}
}
