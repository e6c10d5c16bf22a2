package contract

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Defaults of the bounds of a check, gentle on a production StoreLink.
const (
	DefaultRequestTimeout = 10 * time.Second
	DefaultDeadline       = 60 * time.Second
	DefaultRate           = 10 // requests per second
	DefaultMaxRequests    = 200
)

// Config says which StoreLink to check and how hard. The zero value of each
// optional field picks its default.
type Config struct {
	// BaseURL is StoreLink's base URL; the contract's paths are appended.
	BaseURL string
	// Keyring maps store ids to their keys. One store is enough; two or more
	// let the check prove that a key does not open another store.
	Keyring map[string]string
	// Store is the store probed with its own key; "" picks the lowest id.
	Store string
	// SKU is a SKU the store stocks; "" uses the contract's example SKU.
	SKU string
	// OrderID is an existing order of Store to read, sent as given; ""
	// skips that probe.
	OrderID string
	// SupplierID is a supplier to read, sent as given; "" reads the SKU's
	// supplier.
	SupplierID string
	// Spec is the contract as YAML or JSON; nil means the embedded
	// openapi/storelink.yaml.
	Spec []byte
	// SpecName names Spec in the report (the --spec file as given); "" with
	// Spec set reports "a given spec".
	SpecName string
	// AllowWrites lets the check raise one order at WriteStore and read it
	// back. Without it nothing is sent to the write endpoint.
	AllowWrites bool
	// WriteStore is the only store the check may write to; it needs a key
	// in the keyring.
	WriteStore string
	// MaxOrders is the most orders the check may leave at StoreLink
	// (default DefaultMaxOrders). Accepted and unanswered writes count,
	// negative probes included; at MaxOrders no further write is sent.
	MaxOrders int
	// RequestTimeout bounds each request (default DefaultRequestTimeout).
	RequestTimeout time.Duration
	// Deadline bounds the whole check (default DefaultDeadline).
	Deadline time.Duration
	// Rate is the most requests sent per second (default DefaultRate).
	Rate float64
	// MaxRequests is the most requests the check sends (default
	// DefaultMaxRequests); probes beyond it are not sent.
	MaxRequests int
	// Now is the clock for the POS window; nil means time.Now.
	Now func() time.Time
	// HTTPClient sends the requests; nil means a default client. Redirects
	// are never followed.
	HTTPClient *http.Client
	// Headers are added to every request; their values are secrets and
	// never reported. They may not set the store key header.
	Headers http.Header
	// NoAssumptions leaves out the probes that rest on an assumption the
	// contract does not make (made-up ids name nothing, an order can be
	// read back).
	NoAssumptions bool
	// Operations selects the probes of these operation ids; empty runs all.
	// A probe that needs an id learnt by another operation is skipped
	// unless that operation is selected too.
	Operations []string
	// Generate adds the generated cases after the fixed probes (check
	// --generate).
	Generate bool
	// Seed decides the generated cases; the same seed sends the same
	// requests. 0 is a seed too.
	Seed uint64

	// skuDefaulted is set when no SKU was given.
	skuDefaulted bool
}

// DefaultMaxOrders is the default of Config.MaxOrders (ADR 0031).
const DefaultMaxOrders = 1

var (
	storeIDPattern = regexp.MustCompile(`^[0-9]{1,6}$`)
	skuPattern     = regexp.MustCompile(`^[0-9]{4,14}$`)
	orderIDPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9-]{0,63}$`)
)

// maxSentID bounds an id the check sends as given (an order or supplier
// id of any shape).
const maxSentID = 256

// usableID reports whether an id can be sent in a path: not empty, at most
// maxSentID bytes, no spaces or control characters.
func usableID(id string) bool {
	return id != "" && len(id) <= maxSentID && !strings.ContainsFunc(id, func(r rune) bool { return r <= ' ' || r == 0x7f })
}

// withDefaults fills the optional fields. It never changes the keyring.
func (c Config) withDefaults(exampleSKU string) Config {
	if c.Store == "" && len(c.Keyring) > 0 {
		c.Store = sortedStores(c.Keyring)[0]
	}
	if c.SKU == "" {
		c.SKU, c.skuDefaulted = exampleSKU, true
	}
	if c.MaxOrders == 0 && c.AllowWrites {
		c.MaxOrders = DefaultMaxOrders
	}
	if c.RequestTimeout == 0 {
		c.RequestTimeout = DefaultRequestTimeout
	}
	if c.Deadline == 0 {
		c.Deadline = DefaultDeadline
	}
	if c.Rate == 0 {
		c.Rate = DefaultRate
	}
	if c.MaxRequests == 0 {
		c.MaxRequests = DefaultMaxRequests
		if c.Generate {
			c.MaxRequests = DefaultGenerateMaxRequests
		}
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	c.BaseURL = strings.TrimRight(c.BaseURL, "/")
	return c
}

// validate reports a configuration the check cannot run with. Messages name
// store ids and flags, never keys.
func (c Config) validate() error {
	if c.BaseURL == "" {
		return errors.New("no base URL: pass the StoreLink base URL, e.g. https://storelink.korral.example")
	}
	u, err := url.Parse(c.BaseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("base URL %q is not an http or https URL", c.BaseURL)
	}
	if u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return errors.New("base URL must not carry credentials, a query or a fragment")
	}
	if err := checkKeyring(c.Keyring); err != nil {
		return err
	}
	if _, ok := c.Keyring[c.Store]; !ok {
		return fmt.Errorf("store %q has no key in the keyring", c.Store)
	}
	if !skuPattern.MatchString(c.SKU) {
		return fmt.Errorf("SKU %q is not a SKU code: the contract's pattern is %s (4 to 14 digits)", c.SKU, skuPattern)
	}
	if c.OrderID != "" && !usableID(c.OrderID) {
		return fmt.Errorf("order id %q cannot be sent: want 1 to %d characters without spaces or control characters (any shape; the contract's pattern is %s)", c.OrderID, maxSentID, orderIDPattern)
	}
	if c.SupplierID != "" && !usableID(c.SupplierID) {
		return fmt.Errorf("supplier id %q cannot be sent: want 1 to %d characters without spaces or control characters (any shape; the contract's pattern is %s)", c.SupplierID, maxSentID, supplierIDPattern)
	}
	switch {
	case c.AllowWrites && c.WriteStore == "":
		return errors.New("writes allowed but no write store named: pass the one store the check may raise an order at")
	case !c.AllowWrites && c.WriteStore != "":
		return errors.New("a write store is named but writes are not allowed: pass both to probe the write endpoint")
	case c.AllowWrites:
		if _, ok := c.Keyring[c.WriteStore]; !ok {
			return fmt.Errorf("write store %q has no key in the keyring", c.WriteStore)
		}
	}
	if c.MaxOrders < 0 {
		return errors.New("the bound on orders must be at least 1")
	}
	if c.RequestTimeout < 0 || c.Deadline < 0 {
		return errors.New("timeouts must be positive")
	}
	if c.Rate < 0 || c.MaxRequests < 0 {
		return errors.New("rate and request budget must be positive")
	}
	return nil
}

// validateSelection checks the extra headers and the selected operations
// against the contract. Messages name headers, never their values.
func (c Config) validateSelection(sp *spec) error {
	for name, values := range c.Headers {
		if !validHeaderName(name) {
			return fmt.Errorf("header %q is not a valid header name", name)
		}
		if strings.EqualFold(name, sp.keyHeader) {
			return fmt.Errorf("header %s is the store key header, which every probe sets itself: put the keys in the keyring file", name)
		}
		for _, v := range values {
			if strings.ContainsFunc(v, func(r rune) bool { return r < ' ' || r == 0x7f }) {
				return fmt.Errorf("the value of header %s contains control characters", name)
			}
		}
	}
	for _, op := range c.Operations {
		if _, ok := sp.ops[op]; !ok {
			return fmt.Errorf("operation %q is not in the contract (want one of %s)", op, strings.Join(slices.Sorted(maps.Keys(sp.ops)), ", "))
		}
	}
	return nil
}

// ParseHeader reads a header given as "Name: value", as curl takes it.
// The error never quotes the value.
func ParseHeader(s string) (name, value string, err error) {
	name, value, ok := strings.Cut(s, ":")
	name = strings.TrimSpace(name)
	if !ok || !validHeaderName(name) {
		return "", "", errors.New(`want "Name: value", e.g. "X-Gateway-Key: <key>"`)
	}
	return http.CanonicalHeaderKey(name), strings.TrimSpace(value), nil
}

func validHeaderName(name string) bool {
	if name == "" {
		return false
	}
	for _, r := range name {
		// RFC 9110 token characters.
		if r > 0x7e || r <= ' ' || strings.ContainsRune(`"(),/:;<=>?@[\]{}`, r) {
			return false
		}
	}
	return true
}

// ParseKeyring reads a keyring file's content, a JSON object mapping store
// ids to keys. Errors never quote the content.
func ParseKeyring(data []byte) (map[string]string, error) {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil || raw == nil {
		var syn *json.SyntaxError
		if errors.As(err, &syn) {
			// The offset only: the error text may quote a key's character.
			return nil, fmt.Errorf("keyring is not valid JSON (syntax error at byte %d); want an object of store id to key", syn.Offset)
		}
		return nil, errors.New("keyring is not a JSON object of store id to key")
	}
	keyring := make(map[string]string, len(raw))
	for _, store := range slices.Sorted(maps.Keys(raw)) {
		var key string
		if err := json.Unmarshal(raw[store], &key); err != nil {
			return nil, fmt.Errorf("keyring: the key of store %s is not a string", strconv.Quote(store))
		}
		keyring[store] = key
	}
	if err := checkKeyring(keyring); err != nil {
		return nil, err
	}
	return keyring, nil
}

// ReadKeyringFile reads and parses a keyring file.
func ReadKeyringFile(path string) (map[string]string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read keyring: %w", err)
	}
	keyring, err := ParseKeyring(data)
	if err != nil {
		return nil, fmt.Errorf("keyring file %s: %w", path, err)
	}
	return keyring, nil
}

func checkKeyring(keyring map[string]string) error {
	if len(keyring) == 0 {
		return errors.New("keyring is empty: it needs the key of at least one store")
	}
	owner := map[string]string{}
	for _, store := range sortedStores(keyring) {
		key := keyring[store]
		if !storeIDPattern.MatchString(store) {
			return fmt.Errorf("keyring: %s is not a store id: the contract's pattern is %s (1 to 6 digits)", strconv.Quote(store), storeIDPattern)
		}
		if key == "" {
			return fmt.Errorf("keyring: the key of store %s is empty", store)
		}
		if strings.ContainsFunc(key, func(r rune) bool { return r <= ' ' || r == 0x7f }) {
			return fmt.Errorf("keyring: the key of store %s contains spaces or control characters", store)
		}
		if other, dup := owner[key]; dup {
			return fmt.Errorf("keyring: stores %s and %s have the same key", other, store)
		}
		owner[key] = store
	}
	return nil
}

// sortedStores returns the keyring's store ids in numeric order.
func sortedStores(keyring map[string]string) []string {
	stores := slices.Collect(maps.Keys(keyring))
	slices.SortFunc(stores, func(a, b string) int {
		if len(a) != len(b) {
			return len(a) - len(b)
		}
		return strings.Compare(a, b)
	})
	return stores
}

// specName is how the report names the spec of cfg: "" for the embedded
// contract.
func specName(cfg Config) string {
	switch {
	case cfg.Spec == nil:
		return ""
	case cfg.SpecName != "":
		return cfg.SpecName
	default:
		return "a given spec"
	}
}
