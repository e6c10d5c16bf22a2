package config

import (
	"strings"
	"testing"
)

func TestOAuth(t *testing.T) {
	const issuer = "https://login.korral.example/realms/buyers"
	for name, c := range map[string]struct {
		vars                   map[string]string
		wantIssuer, wantAud    string
		wantPublic, wantString string
	}{
		"audience from the public URL": {map[string]string{"OAUTH_ISSUER": issuer, "MCP_PUBLIC_URL": "https://mcp.korral.example/"},
			issuer, "https://mcp.korral.example/mcp", "https://mcp.korral.example", " oauth_issuer=" + issuer + " oauth_audience=https://mcp.korral.example/mcp"},
		"audience given": {map[string]string{"OAUTH_ISSUER": issuer + "/", "MCP_PUBLIC_URL": "https://mcp.korral.example", "OAUTH_AUDIENCE": "https://storelink.korral.example/"},
			issuer + "/", "https://storelink.korral.example/", "https://mcp.korral.example", "oauth_audience=https://storelink.korral.example/"},
		"loopback over http": {map[string]string{"OAUTH_ISSUER": "http://127.0.0.1:8081", "MCP_PUBLIC_URL": "http://localhost:8080"},
			"http://127.0.0.1:8081", "http://localhost:8080/mcp", "http://localhost:8080", "oauth_issuer=http://127.0.0.1:8081"},
		"none": {map[string]string{}, "", "", "", ""},
	} {
		c.vars["HOME"] = "/h"
		got, err := Load(env(c.vars), noFiles)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if got.OAuthIssuer != c.wantIssuer || got.OAuthAudience != c.wantAud || got.MCPPublicURL != c.wantPublic {
			t.Errorf("%s: issuer %q audience %q public %q", name, got.OAuthIssuer, got.OAuthAudience, got.MCPPublicURL)
		}
		if c.wantString == "" && strings.Contains(got.String(), "oauth") || !strings.Contains(got.String(), c.wantString) {
			t.Errorf("%s: summary %s", name, got.String())
		}
	}
	for name, c := range map[string]struct {
		vars map[string]string
		want string
	}{
		"no resource identifier": {map[string]string{"OAUTH_ISSUER": issuer}, "set MCP_PUBLIC_URL"},
		"audience alone":         {map[string]string{"OAUTH_AUDIENCE": "https://mcp.korral.example/mcp"}, "OAUTH_ISSUER is not"},
		"http off loopback":      {map[string]string{"OAUTH_ISSUER": "http://login.korral.example", "MCP_PUBLIC_URL": "https://mcp.korral.example"}, "OAUTH_ISSUER=\"http://login.korral.example\": must use https"},
		"query":                  {map[string]string{"OAUTH_ISSUER": issuer + "?x=1", "MCP_PUBLIC_URL": "https://mcp.korral.example"}, "no user info, query or fragment"},
		"not a URL":              {map[string]string{"OAUTH_ISSUER": issuer, "MCP_PUBLIC_URL": "mcp.korral.example"}, "MCP_PUBLIC_URL=\"mcp.korral.example\": must be an absolute https URL"},
	} {
		c.vars["HOME"] = "/h"
		if _, err := Load(env(c.vars), noFiles); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v", name, err)
		}
	}
}
