package config

import (
	"strings"
	"testing"
)

// TestCheckRun: what each kind of run refuses, and what it lets through.
func TestCheckRun(t *testing.T) {
	const base, mockNow = "http://127.0.0.1:9", "2026-03-12T10:00:00+01:00"
	for _, tt := range []struct {
		name                  string
		env                   map[string]string
		server, embeddedBuild bool
		want                  string // "" when the run may go ahead
	}{
		{"demo server", nil, true, true, ""},
		{"demo server, pinned clock", map[string]string{"STORELINK_MOCK_NOW": mockNow}, true, true, ""},
		{"production build without a base URL", nil, true, false, "no embedded demo StoreLink"},
		{"keyring without a base URL", map[string]string{"STORELINK_KEYRING": krJSON}, true, true, "STORELINK_KEYRING is set but UPSTREAM_BASE_URL is not"},
		{"keyring without a base URL, not a server", map[string]string{"STORELINK_KEYRING": krJSON}, false, true, ""},
		{"real StoreLink", map[string]string{"UPSTREAM_BASE_URL": base, "STORELINK_KEYRING": krJSON}, true, false, ""},
		{"real StoreLink, pinned clock", map[string]string{"UPSTREAM_BASE_URL": base, "STORELINK_KEYRING": krJSON, "STORELINK_MOCK_NOW": mockNow}, true, true, "applies only to the embedded StoreLink"},
		{"a command, pinned clock", map[string]string{"STORELINK_MOCK_NOW": mockNow}, false, true, "this command runs on the real clock"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			m := map[string]string{"HOME": "/h"}
			for k, v := range tt.env {
				m[k] = v
			}
			c, err := Load(env(m), noFiles)
			if err != nil {
				t.Fatal(err)
			}
			err = c.CheckRun(tt.server, tt.embeddedBuild)
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Fatalf("got %v, want an error with %q", err, tt.want)
			}
		})
	}
}
