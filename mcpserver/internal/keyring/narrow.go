package keyring

import "slices"

// Narrow returns the keyring limited to those ids it holds, for a caller
// allowed fewer stores (an access token's store claim). It never adds a
// store; the result shares the keys and is empty when no id is held.
func (k *Keyring) Narrow(ids []string) *Keyring {
	out := &Keyring{keys: make(map[string]Key, min(len(ids), len(k.keys)))}
	for _, id := range ids {
		if key, ok := k.keys[id]; ok {
			if _, dup := out.keys[id]; !dup {
				out.keys[id] = key
				out.ids = append(out.ids, id)
			}
		}
	}
	slices.SortFunc(out.ids, compareIDs)
	return out
}
