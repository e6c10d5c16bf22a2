package config

import (
	"strings"
	"testing"
)

func TestEmbeddedModeSummarySaysDemo(t *testing.T) {
	c, err := Load(env(map[string]string{"HOME": "/h"}), noFiles)
	if err != nil {
		t.Fatal(err)
	}
	s := c.String()
	if !strings.Contains(s, "upstream=embedded-demo keyring=embedded-demo") || strings.Contains(s, "keyring{}") {
		t.Errorf("summary %q", s)
	}
}

func TestKeyringWithoutStoreLinkLoads(t *testing.T) {
	// The audit and approval commands need no StoreLink; the server itself
	// refuses this combination (package cli).
	c, err := Load(env(map[string]string{"HOME": "/h", "STORELINK_KEYRING": krJSON}), noFiles)
	if err != nil || c.Keyring.Len() != 2 || !strings.Contains(c.String(), "upstream=embedded-demo keyring=keyring{47:") {
		t.Errorf("%v, %v", c, err)
	}
}

func TestLogFile(t *testing.T) {
	c, err := Load(env(map[string]string{"HOME": "/h", "LOG_FILE": "/var/log/storelink-mcp.log"}), noFiles)
	if err != nil || c.LogFile != "/var/log/storelink-mcp.log" {
		t.Errorf("LOG_FILE: %v, %v", c, err)
	}
}
