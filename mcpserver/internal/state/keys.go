package state

import (
	"context"
	"crypto/rand"
	"fmt"
)

// ConsoleKeys keeps the approvals console's secret keys in the state
// database, so that every replica sharing it signs with the same key: a
// login form served by one replica is then accepted by another. A key is
// made on first use and never changes.
type ConsoleKeys interface {
	// ConsoleFormKey returns the key that signs the console's login form
	// (ConsoleKeySize bytes), creating it on first use. Handles racing on
	// first use all get the key that was stored first.
	ConsoleFormKey(ctx context.Context) ([]byte, error)
}

// ConsoleKeySize is the length of a console key in bytes.
const ConsoleKeySize = 32

// NewConsoleKey returns ConsoleKeySize random bytes.
func NewConsoleKey() ([]byte, error) {
	k := make([]byte, ConsoleKeySize)
	if _, err := rand.Read(k); err != nil {
		return nil, fmt.Errorf("state: console key: %w", err)
	}
	return k, nil
}
