package contract

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestParseKeyring(t *testing.T) {
	got, err := ParseKeyring([]byte(`{"47":"slk_47_secret","102":"slk_102_secret"}`))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]string{"47": "slk_47_secret", "102": "slk_102_secret"}, got); diff != "" {
		t.Errorf("keyring (-want +got):\n%s", diff)
	}
	bad := map[string]string{
		`{"47":"slk_47_secret"`:           "syntax error",
		`["slk_47_secret"]`:               "not a JSON object",
		`null`:                            "not a JSON object",
		`{}`:                              "keyring is empty",
		`{"47":12345}`:                    `the key of store "47" is not a string`,
		`{"forty-seven":"slk_47_secret"}`: "is not a store id: the contract's pattern is ^[0-9]{1,6}$",
		`{"47":""}`:                       "the key of store 47 is empty",
		`{"47":"slk 47 secret"}`:          "spaces or control characters",
		`{"47":"slk_47_secret","102":"slk_47_secret"}`: "stores 47 and 102 have the same key",
		`{"47":"slk_47_secret"} {"x":"y"}`:             "syntax error at byte 24",
	}
	for in, want := range bad {
		_, err := ParseKeyring([]byte(in))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseKeyring(%s) = %v, want an error saying %q", in, err, want)
			continue
		}
		if strings.Contains(err.Error(), "secret") {
			t.Errorf("ParseKeyring(%s) error quotes a key: %v", in, err)
		}
	}
}

func TestReadKeyringFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "keyring.json")
	if _, err := ReadKeyringFile(path); err == nil || !strings.Contains(err.Error(), "no such file") {
		t.Errorf("missing file: %v", err)
	}
	if err := os.WriteFile(path, []byte(`{"47":`), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadKeyringFile(path); err == nil || !strings.Contains(err.Error(), path) {
		t.Errorf("invalid file: %v, want the path named", err)
	}
}

func TestConfigErrors(t *testing.T) {
	ok := Config{BaseURL: "http://127.0.0.1:1", Keyring: map[string]string{"47": "k47", "102": "k102"}}
	cases := map[string]struct {
		edit func(*Config)
		want string
	}{
		"no base URL":          {func(c *Config) { c.BaseURL = "" }, "no base URL"},
		"not http":             {func(c *Config) { c.BaseURL = "ftp://storelink" }, "not an http or https URL"},
		"credentials in URL":   {func(c *Config) { c.BaseURL = "https://u:p@storelink" }, "must not carry credentials"},
		"empty keyring":        {func(c *Config) { c.Keyring = nil }, "keyring is empty"},
		"store without key":    {func(c *Config) { c.Store = "55" }, `store "55" has no key`},
		"bad SKU":              {func(c *Config) { c.SKU = "butter" }, "the contract's pattern is ^[0-9]{4,14}$"},
		"bad order":            {func(c *Config) { c.OrderID = "RO 1" }, "without spaces or control characters (any shape; the contract's pattern is ^[A-Za-z0-9][A-Za-z0-9-]{0,63}$)"},
		"bad supplier":         {func(c *Config) { c.SupplierID = "sup\x00" }, "supplier id"},
		"writes, no store":     {func(c *Config) { c.AllowWrites = true }, "no write store named"},
		"store, no writes":     {func(c *Config) { c.WriteStore = "47" }, "writes are not allowed"},
		"write store, no key":  {func(c *Config) { c.AllowWrites, c.WriteStore = true, "55" }, `write store "55" has no key`},
		"negative rate":        {func(c *Config) { c.Rate = -1 }, "must be positive"},
		"negative timeout":     {func(c *Config) { c.RequestTimeout = -time.Second }, "must be positive"},
		"negative max request": {func(c *Config) { c.MaxRequests = -1 }, "must be positive"},
	}
	for name, tc := range cases {
		cfg := ok
		cfg.Keyring = map[string]string{"47": "k47", "102": "k102"}
		tc.edit(&cfg)
		_, err := Check(context.Background(), cfg)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: Check = %v, want an error saying %q", name, err, tc.want)
		}
	}
}

func TestPacerStopsWithTheContext(t *testing.T) {
	p := pacer{interval: time.Hour}
	ctx, cancel := context.WithCancel(context.Background())
	if err := p.wait(ctx); err != nil {
		t.Fatalf("first wait: %v", err)
	}
	cancel()
	// The second request is due in an hour; a cancelled check must not wait
	// for it.
	if err := p.wait(ctx); err == nil {
		t.Fatal("wait ignored a cancelled context")
	}
}
