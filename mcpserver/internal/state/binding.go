package state

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
)

// The approval binding is the fingerprint of what a person approves: one
// order request (its RequestHash: store, SKU, quantity and normalised
// reason) at one StoreLink (its upstream id, ADR 0007). A staged entry
// carries both parts, so the binding recorded at staging is read back from
// the entry; an approval sends only when the binding of what would be sent,
// recomputed from the fields that go into the request and the StoreLink it
// would go to, is the binding recorded (or the one the person was shown).

// ApprovalBinding returns the binding of the request fingerprint
// requestHash at the StoreLink upstreamID. Each part is length-prefixed, so
// that no two different pairs give the same bytes.
func ApprovalBinding(requestHash, upstreamID string) string {
	h := sha256.New()
	h.Write([]byte("approval-binding/v1"))
	var n [8]byte
	for _, s := range []string{requestHash, upstreamID} {
		binary.BigEndian.PutUint64(n[:], uint64(len(s)))
		h.Write(n[:])
		h.Write([]byte(s))
	}
	return hex.EncodeToString(h.Sum(nil))
}

// ApprovalBinding is the binding e records: its request fingerprint as
// stored when it was reserved, at the StoreLink it was recorded for.
func (e Entry) ApprovalBinding() string { return ApprovalBinding(e.RequestHash, e.UpstreamID) }

// SendBinding is the binding of what sending e to the StoreLink upstreamID
// would send: the request fingerprint recomputed from e's store, SKU,
// quantity and reason, at that StoreLink. It differs from ApprovalBinding
// when a field changed after the entry was reserved, or when the StoreLink
// is another.
func (e Entry) SendBinding(upstreamID string) string {
	return ApprovalBinding(RequestHash(e.StoreID, e.SKU, e.QuantityUnits, e.Reason), upstreamID)
}
