package config

import (
	"testing"
)

func TestFileSecrets(t *testing.T) {
	c, err := Load(env(map[string]string{
		"HOME":                   "/h",
		"UPSTREAM_BASE_URL":      "http://storelink:8080",
		"STORELINK_KEYRING_FILE": "/run/secrets/keyring.json",
		"ALLOW_WRITES":           "true",
		"WRITE_APPROVAL":         "required",
	}), files(map[string]string{
		"/run/secrets/keyring.json": krJSON + "\n",
	}))
	if err != nil {
		t.Fatal(err)
	}
	if c.KeyringFile != "/run/secrets/keyring.json" || c.Keyring.Len() != 2 {
		t.Errorf("keyring from file: %v, file %q", c.Keyring, c.KeyringFile)
	}
	if k, _ := c.Keyring.Key("102"); k.Reveal() != keyB {
		t.Errorf("key for 102 = %v", k)
	}
	// Inline keyring: no file to re-read.
	c, err = Load(env(map[string]string{"HOME": "/h", "STORELINK_KEYRING": krJSON, "UPSTREAM_BASE_URL": "https://storelink.example"}), noFiles)
	if err != nil || c.KeyringFile != "" || c.Keyring.Len() != 2 {
		t.Errorf("inline keyring: %v, %v", c, err)
	}
}
