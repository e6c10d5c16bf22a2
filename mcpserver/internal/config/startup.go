package config

import "errors"

// Start-up checks that depend on what the process runs, not only on the
// settings: a server against a real StoreLink, a server on the embedded demo
// StoreLink, or a command that runs no server at all.

// CheckRun refuses a configuration that cannot serve as asked. server is
// true when the process will run the MCP server; embeddedBuild is true when
// the binary holds the embedded demo StoreLink. It refuses:
//   - STORELINK_MOCK_NOW anywhere but a server on the embedded StoreLink (a
//     pinned clock would set approval expiry and audit times for a real
//     StoreLink);
//   - a server without UPSTREAM_BASE_URL in a build without the embedded
//     StoreLink;
//   - a production keyring without UPSTREAM_BASE_URL (a lost setting).
func (c *Config) CheckRun(server, embeddedBuild bool) error {
	if !server || c.UpstreamBaseURL != "" {
		return c.refuseMockNow()
	}
	if !embeddedBuild {
		return errors.New("UPSTREAM_BASE_URL is not set, and this production build has no embedded demo StoreLink: set UPSTREAM_BASE_URL to StoreLink's base URL (with STORELINK_KEYRING_FILE), or run the demo from source with `go run ./cmd/storelink-mcp`")
	}
	if c.Keyring != nil {
		name := EnvKeyring
		if c.KeyringFile != "" {
			name = EnvKeyringFile
		}
		return errors.New(name + " is set but UPSTREAM_BASE_URL is not: set UPSTREAM_BASE_URL to StoreLink's base URL, or unset " + name + " to run the embedded demo StoreLink with its made-up data")
	}
	return nil
}

// refuseMockNow refuses STORELINK_MOCK_NOW outside a server on the embedded
// StoreLink.
func (c *Config) refuseMockNow() error {
	if c.MockNow.IsZero() {
		return nil
	}
	if c.UpstreamBaseURL != "" {
		return errors.New("STORELINK_MOCK_NOW applies only to the embedded StoreLink: unset it, or unset UPSTREAM_BASE_URL")
	}
	return errors.New("STORELINK_MOCK_NOW pins the clock of the embedded demo StoreLink, which only a server (stdio or serve, without UPSTREAM_BASE_URL) runs; this command runs on the real clock: unset STORELINK_MOCK_NOW")
}
