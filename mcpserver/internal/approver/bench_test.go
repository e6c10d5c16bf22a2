package approver

import "testing"

// BenchmarkDeriveDefault is the cost of one secret check with DefaultParams:
// what a login or a CLI decision waits for, and what an attacker pays per
// guess.
func BenchmarkDeriveDefault(b *testing.B) {
	salt := randomSalt()
	for b.Loop() {
		idKey([]byte("a-secret-of-the-usual-length-0123"), salt, DefaultParams, 32)
	}
}
