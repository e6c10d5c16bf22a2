package keyring

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/korral/storelink/mcpserver/internal/apperr"
)

// MaxKeyLen is the longest key accepted; anything longer is a pasted file,
// not a key.
const MaxKeyLen = 512

// listLimit bounds how many store ids an error message lists.
const listLimit = 20

// Keyring maps store ids to their keys. It is immutable once parsed, so it
// can be shared and swapped whole on rotation.
type Keyring struct {
	keys map[string]Key
	ids  []string // sorted numerically
}

// Parse reads a keyring from a JSON object such as {"47": "key"}. Errors
// never echo a key: an invalid store id is reported by its position.
func Parse(data []byte) (*Keyring, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, errors.New("keyring is empty: want a JSON object like {\"47\": \"<key>\"}")
	}
	// The decoder would turn invalid UTF-8 into U+FFFD and send a mangled
	// key; refuse it, by byte offset.
	if !utf8.Valid(data) {
		return nil, fmt.Errorf("keyring is not valid UTF-8 (first bad byte at offset %d): save it as UTF-8 text", invalidUTF8At(data))
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	tok, err := dec.Token()
	if err != nil {
		return nil, errors.New("keyring is not valid JSON: want an object like {\"47\": \"<key>\"}")
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, fmt.Errorf("keyring is a JSON %s, not an object: want {\"47\": \"<key>\"}", kindOf(tok))
	}
	kr := &Keyring{keys: map[string]Key{}}
	owner := map[[32]byte]string{} // key hash -> store id, to catch one key under two stores
	for entry := 1; dec.More(); entry++ {
		tok, err := dec.Token()
		if err != nil {
			return nil, fmt.Errorf("keyring entry %d: not valid JSON", entry)
		}
		id, _ := tok.(string) // object keys are always strings
		if !validStoreID(id) {
			return nil, fmt.Errorf("keyring entry %d: the store id is not 1 to 6 digits (like \"47\")", entry)
		}
		if _, dup := kr.keys[id]; dup {
			return nil, fmt.Errorf("keyring: store %s appears twice; keep one entry per store", id)
		}
		tok, err = dec.Token()
		if err != nil {
			return nil, fmt.Errorf("keyring: store %s: the value is not valid JSON", id)
		}
		v, ok := tok.(string)
		if !ok {
			return nil, fmt.Errorf("keyring: store %s: the key is a JSON %s, want a string", id, kindOf(tok))
		}
		if err := checkKey(v); err != nil {
			return nil, fmt.Errorf("keyring: store %s: %w", id, err)
		}
		h := hashOf(v)
		if other, ok := owner[h]; ok {
			return nil, fmt.Errorf("keyring: stores %s and %s have the same key; each StoreLink key opens exactly one store", other, id)
		}
		owner[h] = id
		kr.keys[id] = NewKey(v)
		kr.ids = append(kr.ids, id)
	}
	if _, err := dec.Token(); err != nil { // the closing brace
		return nil, errors.New("keyring is not valid JSON: the object is not closed")
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("keyring has data after the JSON object; it must hold exactly one object")
	}
	if len(kr.ids) == 0 {
		return nil, errors.New("keyring holds no stores: want at least one entry like {\"47\": \"<key>\"}")
	}
	slices.SortFunc(kr.ids, compareIDs)
	return kr, nil
}

// invalidUTF8At is the offset of the first byte that is not valid UTF-8.
func invalidUTF8At(data []byte) int {
	for i := 0; i < len(data); {
		r, size := utf8.DecodeRune(data[i:])
		if r == utf8.RuneError && size <= 1 {
			return i
		}
		i += size
	}
	return len(data)
}

// kindOf names a JSON token's kind for error messages, without its value.
func kindOf(tok json.Token) string {
	switch t := tok.(type) {
	case json.Delim:
		if t == '[' {
			return "array"
		}
		return "object"
	case string:
		return "string"
	case float64, json.Number:
		return "number"
	case bool:
		return "boolean"
	case nil:
		return "null"
	}
	return "value"
}

func checkKey(v string) error {
	switch {
	case strings.TrimSpace(v) == "":
		return errors.New("the key is empty or only whitespace")
	case len(v) > MaxKeyLen:
		return fmt.Errorf("the key is longer than %d bytes", MaxKeyLen)
	case !utf8.ValidString(v):
		return errors.New("the key is not valid UTF-8")
	case strings.TrimSpace(v) != v:
		return errors.New("the key has leading or trailing whitespace")
	case strings.IndexFunc(v, unicode.IsControl) >= 0:
		// A control character cannot travel in an HTTP header.
		return errors.New("the key contains a control character")
	}
	return nil
}

func hashOf(v string) [32]byte { return sha256.Sum256([]byte(v)) }

// validStoreID mirrors StoreLink's StoreID pattern ^[0-9]{1,6}$.
func validStoreID(id string) bool {
	if len(id) < 1 || len(id) > 6 {
		return false
	}
	for i := 0; i < len(id); i++ {
		if id[i] < '0' || id[i] > '9' {
			return false
		}
	}
	return true
}

// compareIDs orders store ids numerically, then textually ("047" vs "47").
func compareIDs(a, b string) int {
	na, _ := strconv.Atoi(a)
	nb, _ := strconv.Atoi(b)
	if na != nb {
		if na < nb {
			return -1
		}
		return 1
	}
	return strings.Compare(a, b)
}

// StoreIDs returns the authorized store ids, sorted numerically, as a copy.
func (k *Keyring) StoreIDs() []string { return slices.Clone(k.ids) }

// Page returns at most limit store ids in numeric order after the store id
// after ("" starts at the first), and whether more follow. after need not be
// in the keyring, so paging survives a rotation.
func (k *Keyring) Page(after string, limit int) (ids []string, more bool) {
	start := 0
	if after != "" {
		start, _ = slices.BinarySearchFunc(k.ids, after, compareIDs)
		if start < len(k.ids) && k.ids[start] == after {
			start++
		}
	}
	end := min(start+max(limit, 0), len(k.ids))
	return slices.Clone(k.ids[start:end]), end < len(k.ids)
}

// Len returns the number of authorized stores.
func (k *Keyring) Len() int { return len(k.ids) }

// Key returns the key for a store, and whether the store is authorized.
func (k *Keyring) Key(storeID string) (Key, bool) {
	key, ok := k.keys[storeID]
	return key, ok
}

// Resolve applies the scoping rules to a tool's store_id argument:
//   - "" with exactly one store resolves to it;
//   - "" with several is STORE_ID_REQUIRED (never guess);
//   - an id not 1 to 6 digits is INVALID_ARGUMENT;
//   - an id without a key is STORE_NOT_AUTHORIZED.
func (k *Keyring) Resolve(storeID string) (string, error) {
	if storeID == "" {
		if len(k.ids) == 1 {
			return k.ids[0], nil
		}
		return "", apperr.New(apperr.StoreIDRequired,
			fmt.Sprintf("store_id is required: this deployment is authorized for %d stores (%s)", len(k.ids), k.idList()),
			fmt.Sprintf("Pass store_id as one of %s; call korral_list_authorized_stores to see their names and hours.", k.idList()))
	}
	if !validStoreID(storeID) {
		return "", apperr.New(apperr.InvalidArgument,
			"store_id must be 1 to 6 digits, like \"47\"",
			"Pass a store_id returned by korral_list_authorized_stores.")
	}
	if _, ok := k.keys[storeID]; !ok {
		return "", apperr.New(apperr.StoreNotAuthorized,
			fmt.Sprintf("store %s is not authorized for this deployment; authorized stores: %s", storeID, k.idList()),
			fmt.Sprintf("Use one of %s (see korral_list_authorized_stores); access to store %s needs its key added to the keyring by an operator.", k.idList(), storeID))
	}
	return storeID, nil
}

// idList renders the authorized ids for a message, capped at listLimit.
func (k *Keyring) idList() string {
	if len(k.ids) <= listLimit {
		return strings.Join(k.ids, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(k.ids[:listLimit], ", "), len(k.ids)-listLimit)
}

// String lists the stores with their key fingerprints, e.g.
// "keyring{47:key:3fa9c1, 102:key:07be55}".
func (k *Keyring) String() string {
	if k == nil {
		return "keyring{}"
	}
	parts := make([]string, len(k.ids))
	for i, id := range k.ids {
		parts[i] = id + ":" + k.keys[id].Fingerprint()
	}
	return "keyring{" + strings.Join(parts, ", ") + "}"
}

// Format prints String for every verb, so %v cannot print key internals.
func (k *Keyring) Format(f fmt.State, _ rune) { _, _ = fmt.Fprint(f, k.String()) }

// LogValue logs the store ids and fingerprints.
func (k *Keyring) LogValue() slog.Value { return slog.StringValue(k.String()) }
