package config

import "testing"

// TestProblemsInTheirOrder: a configuration broken in many places lists its
// problems in one fixed order, single settings and the rules spanning
// several interleaved as they always were.
func TestProblemsInTheirOrder(t *testing.T) {
	_, err := Load(env(map[string]string{
		"HOME":                        "/h",
		"READ_ONLY":                   "true",
		"ALLOW_WRITES":                "true",
		"STORELINK_MOCK_NOW":          "yesterday",
		"STORELINK_KEYRING":           "{}",
		"APPROVAL_CREDENTIAL":         cred,
		"APPROVAL_WEBHOOK_SECRET":     "whsec-0123456789abcdef",
		"CONSOLE_PUBLIC_URL":          "ftp://approvals",
		"OAUTH_AUDIENCE":              "https://mcp.korral.example/mcp",
		"OTEL_EXPORTER_OTLP_PROTOCOL": "grpc",
	}), noFiles)
	want := []string{
		`STORELINK_MOCK_NOW="yesterday": must be an RFC 3339 time`,
		"STORELINK_KEYRING: keyring holds no stores",
		"APPROVAL_CREDENTIAL is no longer used",
		"APPROVAL_WEBHOOK_SECRET is set but APPROVAL_WEBHOOK_URL is not",
		`CONSOLE_PUBLIC_URL="ftp://approvals": must be an absolute http or https URL`,
		"OAUTH_AUDIENCE is set but OAUTH_ISSUER is not",
		`OTEL_EXPORTER_OTLP_PROTOCOL="grpc": only http/protobuf is built in`,
		"READ_ONLY=true and ALLOW_WRITES=true contradict each other",
	}
	wantProblems(t, err, want)
}
