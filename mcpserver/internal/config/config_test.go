package config

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/korral/storelink/mcpserver/internal/keyring"
)

const (
	keyA = "sk-47-secretvalue-aaaa"
	keyB = "sk-102-secretvalue-bbbb"
	cred = "release-me-please-0123456789"
	// approverCred is what a person presents; it differs from cred so a
	// leak of either is caught on its own.
	approverCred = "approver-presents-this-9876543210"
	krJSON       = `{"47": "` + keyA + `", "102": "` + keyB + `"}`
)

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func files(m map[string]string) func(string) ([]byte, error) {
	return func(p string) ([]byte, error) {
		v, ok := m[p]
		if !ok {
			return nil, &fs.PathError{Op: "open", Path: p, Err: fs.ErrNotExist}
		}
		return []byte(v), nil
	}
}

var noFiles = files(nil)

// cmpConfig compares configs, keyrings by their store ids.
var cmpConfig = cmp.Comparer(func(a, b *keyring.Keyring) bool {
	if a == nil || b == nil {
		return a == b
	}
	return cmp.Equal(a.StoreIDs(), b.StoreIDs())
})

func TestDefaults(t *testing.T) {
	got, err := Load(env(map[string]string{"HOME": "/home/buyer"}), noFiles)
	if err != nil {
		t.Fatal(err)
	}
	want := &Config{
		DefaultLookbackDays: 14,
		LogLevel:            slog.LevelInfo,
		UpstreamTimeout:     5 * time.Second,
		UpstreamMaxInFlight: 64,
		MaxOrderUnits:       500,
		WriteApproval:       ApprovalNone,
		ApprovalTTL:         24 * time.Hour,
		StatePath:           "/home/buyer/.local/state/storelink-mcp/state.db",
		StateMaxConns:       10,
		JournalPath:         "/home/buyer/.local/state/storelink-mcp/state.db.outcomes.jsonl",
		BreakerFailures:     5,
		BreakerCooldown:     30 * time.Second,
		MasterDataTTL:       5 * time.Minute,

		StdioMaxLineBytes:       1 << 20,
		HTTPMaxSessions:         1000,
		HTTPMaxSessionsPerToken: 100,
		HTTPSessionIdleTimeout:  30 * time.Minute,
		Telemetry:               defaultTelemetry,
	}
	if diff := cmp.Diff(want, got, cmpConfig); diff != "" {
		t.Errorf("defaults (-want +got):\n%s", diff)
	}
}

func TestEveryValueSet(t *testing.T) {
	got, err := Load(env(map[string]string{
		"UPSTREAM_BASE_URL":      "https://storelink.korral.internal/api/",
		"STORELINK_KEYRING":      krJSON,
		"DEFAULT_LOOKBACK_DAYS":  "28",
		"LOG_LEVEL":              "debug",
		"UPSTREAM_TIMEOUT":       "750ms",
		"UPSTREAM_MAX_IN_FLIGHT": "7",
		"ALLOW_WRITES":           "1",
		"MAX_ORDER_UNITS":        "100000",
		"READ_ONLY":              "0",
		"WRITE_APPROVAL":         "required",
		"APPROVAL_TTL":           "2h",
		"STATE_DB_PATH":          "/var/lib/storelink-mcp/state.db",
		"BREAKER_FAILURES":       "1",
		"BREAKER_COOLDOWN":       "10m",
		"MASTER_DATA_TTL":        "0",

		"STDIO_MAX_LINE_BYTES":            "1024",
		"MCP_HTTP_MAX_SESSIONS":           "2",
		"MCP_HTTP_MAX_SESSIONS_PER_TOKEN": "1",
		"MCP_HTTP_SESSION_IDLE_TIMEOUT":   "1s",
		"MCP_AUTH_TOKENS_FILE":            "/etc/storelink/tokens",
		"MCP_HTTP_INSECURE":               "false",
		"STORELINK_MOCK_NOW":              "2026-11-27T14:30:00+01:00",
		"APPROVER_SECRET":                 cred,
	}), noFiles)
	if err != nil {
		t.Fatal(err)
	}
	kr, _ := keyring.Parse([]byte(krJSON))
	want := &Config{
		UpstreamBaseURL:     "https://storelink.korral.internal/api",
		Keyring:             kr,
		DefaultLookbackDays: 28,
		LogLevel:            slog.LevelDebug,
		UpstreamTimeout:     750 * time.Millisecond,
		UpstreamMaxInFlight: 7,
		AllowWrites:         true,
		MaxOrderUnits:       100000,
		WriteApproval:       ApprovalRequired,
		ApprovalTTL:         2 * time.Hour,
		StatePath:           "/var/lib/storelink-mcp/state.db",
		StateMaxConns:       10,
		JournalPath:         "/var/lib/storelink-mcp/state.db.outcomes.jsonl",
		BreakerFailures:     1,
		BreakerCooldown:     10 * time.Minute,

		StdioMaxLineBytes:       1024,
		HTTPMaxSessions:         2,
		HTTPMaxSessionsPerToken: 1,
		HTTPSessionIdleTimeout:  time.Second,
		AuthTokensFile:          "/etc/storelink/tokens",
		MockNow:                 time.Date(2026, 11, 27, 14, 30, 0, 0, time.FixedZone("", 3600)),
		ApproverSecret:          cred,
		Telemetry:               defaultTelemetry,
	}
	if diff := cmp.Diff(want, got, cmpConfig); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestStatePathDefaults(t *testing.T) {
	tests := []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{"XDG_STATE_HOME": "/xdg", "HOME": "/h"}, "/xdg/storelink-mcp/state.db"},
		{map[string]string{"XDG_STATE_HOME": "relative/dir", "HOME": "/h"}, "/h/.local/state/storelink-mcp/state.db"},
		{map[string]string{"STATE_DB_PATH": "./state.db", "HOME": "/h"}, "./state.db"},
	}
	for _, tt := range tests {
		c, err := Load(env(tt.env), noFiles)
		if err != nil || c.StatePath != tt.want {
			t.Errorf("Load(%v).StatePath = %v, %v; want %q", tt.env, c, err, tt.want)
		}
	}
}

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

func TestErrors(t *testing.T) {
	tests := []struct {
		name  string
		env   map[string]string
		files map[string]string
		want  []string
	}{
		{"lookback too high", map[string]string{"DEFAULT_LOOKBACK_DAYS": "40"},
			nil, []string{`DEFAULT_LOOKBACK_DAYS="40": must be an integer from 1 to 28`}},
		{"lookback zero", map[string]string{"DEFAULT_LOOKBACK_DAYS": "0"},
			nil, []string{`DEFAULT_LOOKBACK_DAYS="0": must be an integer from 1 to 28`}},
		{"lookback not a number", map[string]string{"DEFAULT_LOOKBACK_DAYS": "two weeks"},
			nil, []string{`DEFAULT_LOOKBACK_DAYS="two weeks": must be an integer from 1 to 28`}},
		{"log level", map[string]string{"LOG_LEVEL": "verbose"},
			nil, []string{`LOG_LEVEL="verbose": must be one of debug, info, warn, error`}},
		{"log level case", map[string]string{"LOG_LEVEL": "INFO"},
			nil, []string{`LOG_LEVEL="INFO": must be one of debug, info, warn, error`}},
		{"timeout unit missing", map[string]string{"UPSTREAM_TIMEOUT": "5"},
			nil, []string{`UPSTREAM_TIMEOUT="5": must be a duration from 100ms to 1m0s, like 5s`}},
		{"budget of none", map[string]string{"UPSTREAM_MAX_IN_FLIGHT": "0"},
			nil, []string{`UPSTREAM_MAX_IN_FLIGHT="0": must be`}},
		{"budget too large", map[string]string{"UPSTREAM_MAX_IN_FLIGHT": "1025"},
			nil, []string{`UPSTREAM_MAX_IN_FLIGHT="1025": must be`}},
		{"timeout too long", map[string]string{"UPSTREAM_TIMEOUT": "2m"},
			nil, []string{`UPSTREAM_TIMEOUT="2m": must be a duration from 100ms to 1m0s`}},
		{"bool yes", map[string]string{"ALLOW_WRITES": "yes"},
			nil, []string{`ALLOW_WRITES="yes": must be true, false, 1 or 0`}},
		{"bool TRUE", map[string]string{"READ_ONLY": "TRUE"},
			nil, []string{`READ_ONLY="TRUE": must be true, false, 1 or 0`}},
		{"insecure switch", map[string]string{"MCP_HTTP_INSECURE": "yes"},
			nil, []string{`MCP_HTTP_INSECURE="yes": must be true, false, 1 or 0`}},
		{"max order units", map[string]string{"MAX_ORDER_UNITS": "100001"},
			nil, []string{`MAX_ORDER_UNITS="100001": must be an integer from 1 to 100000`}},
		{"approval mode", map[string]string{"WRITE_APPROVAL": "optional"},
			nil, []string{`WRITE_APPROVAL="optional": must be one of none, required`}},
		{"approval ttl", map[string]string{"APPROVAL_TTL": "30s"},
			nil, []string{`APPROVAL_TTL="30s": must be a duration from 1m0s to 168h0m0s`}},
		{"breaker failures", map[string]string{"BREAKER_FAILURES": "-1"},
			nil, []string{`BREAKER_FAILURES="-1": must be an integer from 1 to 100`}},
		{"breaker cooldown", map[string]string{"BREAKER_COOLDOWN": "500ms"},
			nil, []string{`BREAKER_COOLDOWN="500ms": must be a duration from 1s to 10m0s`}},
		{"master data ttl too long", map[string]string{"MASTER_DATA_TTL": "2h"},
			nil, []string{`MASTER_DATA_TTL="2h": must be a duration from 0s to 1h0m0s`}},
		{"master data ttl negative", map[string]string{"MASTER_DATA_TTL": "-1s"},
			nil, []string{`MASTER_DATA_TTL="-1s": must be a duration from 0s to 1h0m0s`}},
		{"url scheme", map[string]string{"UPSTREAM_BASE_URL": "storelink.korral.internal", "STORELINK_KEYRING": krJSON},
			nil, []string{`UPSTREAM_BASE_URL="storelink.korral.internal": must be an absolute http or https URL`}},
		{"url credentials", map[string]string{"UPSTREAM_BASE_URL": "https://admin:" + keyA + "@storelink", "STORELINK_KEYRING": krJSON},
			nil, []string{"UPSTREAM_BASE_URL: must not contain credentials"}},
		{"url query", map[string]string{"UPSTREAM_BASE_URL": "https://storelink/?x=1", "STORELINK_KEYRING": krJSON},
			nil, []string{`UPSTREAM_BASE_URL="https://storelink/?x=1": must not have a query or fragment`}},
		{"url unparsable", map[string]string{"UPSTREAM_BASE_URL": "http://[::1", "STORELINK_KEYRING": krJSON},
			nil, []string{"UPSTREAM_BASE_URL: is not a URL"}},
		{"upstream without keyring", map[string]string{"UPSTREAM_BASE_URL": "https://storelink"},
			nil, []string{"STORELINK_KEYRING or STORELINK_KEYRING_FILE is required when UPSTREAM_BASE_URL is set"}},
		{"keyring both ways", map[string]string{"STORELINK_KEYRING": krJSON, "STORELINK_KEYRING_FILE": "/k"},
			map[string]string{"/k": krJSON}, []string{"STORELINK_KEYRING and STORELINK_KEYRING_FILE are both set: keep one"}},
		{"keyring file missing", map[string]string{"STORELINK_KEYRING_FILE": "/nope"},
			nil, []string{`STORELINK_KEYRING_FILE="/nope": cannot read the file: open /nope: file does not exist`}},
		{"keyring file empty", map[string]string{"STORELINK_KEYRING_FILE": "/k"},
			map[string]string{"/k": "\n"}, []string{`STORELINK_KEYRING_FILE="/k": the file is empty`}},
		{"keyring not JSON", map[string]string{"STORELINK_KEYRING": keyA},
			nil, []string{"STORELINK_KEYRING: keyring is not valid JSON"}},
		{"keyring bad id in file", map[string]string{"STORELINK_KEYRING_FILE": "/k"},
			map[string]string{"/k": `{"` + keyA + `": "47"}`}, []string{`STORELINK_KEYRING_FILE="/k": keyring entry 1: the store id is not 1 to 6 digits`}},
		{"keyring duplicate", map[string]string{"STORELINK_KEYRING": `{"47": "` + keyA + `", "47": "` + keyB + `"}`},
			nil, []string{"STORELINK_KEYRING: keyring: store 47 appears twice"}},
		{"read-only with writes", map[string]string{"READ_ONLY": "true", "ALLOW_WRITES": "true"},
			nil, []string{"READ_ONLY=true and ALLOW_WRITES=true contradict each other"}},
		{"approval with read-only", map[string]string{"READ_ONLY": "true", "WRITE_APPROVAL": "required"},
			nil, []string{"WRITE_APPROVAL=required and READ_ONLY=true contradict each other"}},
		{"approval without writes", map[string]string{"WRITE_APPROVAL": "required"},
			nil, []string{"WRITE_APPROVAL=required has no effect unless ALLOW_WRITES=true"}},
		// The shared credential is gone; each of its variables is refused,
		// alone, with or without approval mode, with the migration step.
		{"old approval credential", map[string]string{"ALLOW_WRITES": "true", "WRITE_APPROVAL": "required", "APPROVAL_CREDENTIAL": cred},
			nil, []string{"APPROVAL_CREDENTIAL is no longer used: approvers are named and verified by the server's own record; run `storelink-mcp approvers add NAME` for each approver, hand each their secret, and remove APPROVAL_CREDENTIAL from the environment"}},
		{"old approval credential file", map[string]string{"APPROVAL_CREDENTIAL_FILE": "/c"},
			map[string]string{"/c": cred}, []string{"APPROVAL_CREDENTIAL_FILE is no longer used: approvers are named and verified by the server's own record; run `storelink-mcp approvers add NAME` for each approver, hand each their secret, and remove APPROVAL_CREDENTIAL_FILE from the environment"}},
		{"old approver credential", map[string]string{"APPROVER_CREDENTIAL": approverCred},
			nil, []string{"APPROVER_CREDENTIAL is no longer used: approvers are named and verified"}},
		{"no home for state", map[string]string{"HOME": ""},
			nil, []string{"STATE_DB_PATH: neither it, XDG_STATE_HOME nor HOME is set"}},
		{
			// Every problem at once, in variable order.
			name: "all errors are reported together",
			env: map[string]string{"DEFAULT_LOOKBACK_DAYS": "40", "LOG_LEVEL": "loud", "ALLOW_WRITES": "yes",
				"MAX_ORDER_UNITS": "0", "STORELINK_KEYRING": "{}"},
			want: []string{
				`DEFAULT_LOOKBACK_DAYS="40": must be an integer from 1 to 28`,
				`LOG_LEVEL="loud": must be one of debug, info, warn, error`,
				`ALLOW_WRITES="yes": must be true, false, 1 or 0`,
				`MAX_ORDER_UNITS="0": must be an integer from 1 to 100000`,
				`STORELINK_KEYRING: keyring holds no stores`,
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := map[string]string{"HOME": "/h"}
			for k, v := range tt.env {
				e[k] = v
			}
			c, err := Load(env(e), files(tt.files))
			if err == nil {
				t.Fatalf("Load succeeded: %v", c)
			}
			if c != nil {
				t.Errorf("Load returned a config with an error")
			}
			lines := strings.Split(err.Error(), "\n")
			if len(lines) != len(tt.want) {
				t.Errorf("got %d errors, want %d:\n%s", len(lines), len(tt.want), err)
			}
			for i, w := range tt.want {
				if i < len(lines) && !strings.HasPrefix(lines[i], w) {
					t.Errorf("error %d = %q\nwant prefix %q", i, lines[i], w)
				}
			}
			for _, secret := range []string{keyA, keyB, cred, approverCred} {
				if strings.Contains(err.Error(), secret) {
					t.Errorf("error echoes a secret: %s", err)
				}
			}
		})
	}
}

func TestConfigPrintingRedacts(t *testing.T) {
	c, err := Load(env(map[string]string{
		"HOME": "/h", "STORELINK_KEYRING": krJSON, "ALLOW_WRITES": "true", "UPSTREAM_BASE_URL": "https://storelink.example",
		"WRITE_APPROVAL": "required", "APPROVER_SECRET": approverCred,
	}), noFiles)
	if err != nil {
		t.Fatal(err)
	}
	var sb strings.Builder
	slog.New(slog.NewTextHandler(&sb, nil)).Info("config", "cfg", c)
	for _, out := range []string{fmt.Sprintf("%v", c), fmt.Sprintf("%+v", *c), fmt.Sprintf("%#v", c), c.String(), sb.String()} {
		for _, secret := range []string{keyA, keyB, cred, approverCred} {
			if strings.Contains(out, secret) {
				t.Errorf("printed config leaks a secret: %s", out)
			}
		}
		if !strings.Contains(out, "write_approval=required") || !strings.Contains(out, "47:key:") {
			t.Errorf("printed config lacks the redacted summary: %s", out)
		}
	}
}

// TestSettingsCoverLoad checks that every variable Load reads is a row of
// the settings table and every row is read: the rules spanning several
// settings read their variables by name.
func TestSettingsCoverLoad(t *testing.T) {
	read := map[string]bool{}
	getenv := func(k string) string { read[k] = true; return "" }
	_, _ = Load(getenv, noFiles)
	// Variables read only on some paths.
	_, _ = Load(func(k string) string {
		read[k] = true
		return map[string]string{"HOME": "/h"}[k]
	}, noFiles)
	documented := map[string]bool{}
	name := regexp.MustCompile(`^[A-Z][A-Z0-9_]*$`)
	for _, v := range Settings() {
		if !name.MatchString(v.Name) || v.Description == "" || !strings.HasSuffix(v.Description, ".") {
			t.Errorf("badly documented variable %+v", v)
		}
		if documented[v.Name] {
			t.Errorf("%s documented twice", v.Name)
		}
		documented[v.Name] = true
		if !read[v.Name] {
			t.Errorf("%s is documented but Load never reads it", v.Name)
		}
	}
	platform := map[string]bool{"HOME": true, "XDG_STATE_HOME": true}
	for _, old := range Removed {
		// Read only to be refused (LegacyApprovalMessage).
		platform[old] = true
	}
	for k := range read {
		if !documented[k] && !platform[k] {
			t.Errorf("Load reads %s but the settings table has no row for it", k)
		}
	}
}

// TestDocumentedDefaultsMatch checks the defaults the README shows against
// what Load actually does with an empty environment.
func TestDocumentedDefaultsMatch(t *testing.T) {
	c, err := Load(env(map[string]string{"HOME": "/h"}), noFiles)
	if err != nil {
		t.Fatal(err)
	}
	actual := map[string]string{
		"UPSTREAM_BASE_URL":      c.UpstreamBaseURL,
		"DEFAULT_LOOKBACK_DAYS":  fmt.Sprint(c.DefaultLookbackDays),
		"LOG_LEVEL":              strings.ToLower(c.LogLevel.String()),
		"UPSTREAM_TIMEOUT":       c.UpstreamTimeout.String(),
		"UPSTREAM_MAX_IN_FLIGHT": fmt.Sprint(c.UpstreamMaxInFlight),
		"ALLOW_WRITES":           fmt.Sprint(c.AllowWrites),
		"MAX_ORDER_UNITS":        fmt.Sprint(c.MaxOrderUnits),
		"READ_ONLY":              fmt.Sprint(c.ReadOnly),
		"WRITE_APPROVAL":         c.WriteApproval,
		"APPROVAL_TTL":           strings.TrimSuffix(strings.TrimSuffix(c.ApprovalTTL.String(), "0s"), "0m"),
		"BREAKER_FAILURES":       fmt.Sprint(c.BreakerFailures),
		"BREAKER_COOLDOWN":       c.BreakerCooldown.String(),
		"MASTER_DATA_TTL":        strings.TrimSuffix(c.MasterDataTTL.String(), "0s"),

		"STDIO_MAX_LINE_BYTES":            fmt.Sprint(c.StdioMaxLineBytes),
		"MCP_HTTP_MAX_SESSIONS":           fmt.Sprint(c.HTTPMaxSessions),
		"MCP_HTTP_MAX_SESSIONS_PER_TOKEN": fmt.Sprint(c.HTTPMaxSessionsPerToken),
		"MCP_HTTP_SESSION_IDLE_TIMEOUT":   strings.TrimSuffix(c.HTTPSessionIdleTimeout.String(), "0s"),
		"MCP_AUTH_TOKENS_FILE":            c.AuthTokensFile,
		"MCP_HTTP_INSECURE":               fmt.Sprint(c.HTTPInsecure),
		"STORELINK_MOCK_NOW":              mockNowText(c.MockNow),
	}
	for _, v := range Settings() {
		shown := strings.Trim(v.ShownDefault(), "`")
		if v.ShownDefault() == "" || strings.HasPrefix(shown, "(") {
			shown = "" // (unset), (real clock): none
		}
		if got, ok := actual[v.Name]; ok && got != shown {
			t.Errorf("%s: documented default %q, Load gives %q", v.Name, shown, got)
		}
	}
}

func TestLoadWithProcessEnvironment(t *testing.T) {
	// The production wiring: os.Getenv and os.ReadFile. Blank every variable
	// first so the runner's own environment cannot leak in.
	for _, v := range Settings() {
		t.Setenv(v.Name, "")
	}
	t.Setenv("XDG_STATE_HOME", "")
	t.Setenv("HOME", t.TempDir())
	path := t.TempDir() + "/keyring.json"
	if err := os.WriteFile(path, []byte(krJSON), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("STORELINK_KEYRING_FILE", path)
	t.Setenv("UPSTREAM_BASE_URL", "https://storelink.example")
	c, err := Load(os.Getenv, os.ReadFile)
	if err != nil {
		t.Fatal(err)
	}
	if c.Keyring.Len() != 2 || c.KeyringFile != path {
		t.Errorf("keyring %v from %q", c.Keyring, c.KeyringFile)
	}
	var pe *fs.PathError
	t.Setenv("STORELINK_KEYRING_FILE", path+".missing")
	if _, err := Load(os.Getenv, os.ReadFile); err == nil || errors.As(err, &pe) {
		// The read error is folded into a message; callers get text, not a
		// *fs.PathError to misinterpret as a missing config.
		t.Errorf("missing file: err = %v", err)
	}
}

func TestStateDatabaseURL(t *testing.T) {
	const url = "postgres://storelink:s3cr3t-pw@db.internal:5432/storelink?sslmode=require"
	got, err := Load(env(map[string]string{"STATE_DATABASE_URL_FILE": "/run/secrets/db", "STATE_DATABASE_MAX_CONNS": "4"}),
		files(map[string]string{"/run/secrets/db": url + "\n"}))
	if err != nil {
		t.Fatal(err)
	}
	if got.StateDatabaseURL != url || got.StatePath != "" || got.StateMaxConns != 4 {
		t.Errorf("got url %q path %q conns %d; want the URL, no SQLite path and 4", got.StateDatabaseURL, got.StatePath, got.StateMaxConns)
	}
	if s := fmt.Sprintf("%v %s %+v", got, got, got); strings.Contains(s, "s3cr3t-pw") || !strings.Contains(s, "db.internal:5432") {
		t.Errorf("the summary shows the password or hides the host: %s", s)
	}
	if r := RedactURL("postgresql://u@h/db?password=s3cr3t-pw"); strings.Contains(r, "s3cr3t-pw") {
		t.Errorf("RedactURL kept a password= parameter: %s", r)
	}
	for _, tc := range []struct{ env map[string]string }{
		{map[string]string{"STATE_DATABASE_URL": "mysql://u:s3cr3t-pw@h/db", "HOME": "/h"}},
		{map[string]string{"STATE_DATABASE_URL": "postgres://u:s3cr3t-pw@/db", "HOME": "/h"}},
		{map[string]string{"STATE_DATABASE_URL": "postgres://u:s3cr3t-pw@h", "HOME": "/h"}},
		{map[string]string{"STATE_DATABASE_URL": "postgres://u:s3cr3t-pw@h:port/db", "HOME": "/h"}},
		{map[string]string{"STATE_DATABASE_URL": url, "STATE_DB_PATH": "/var/lib/x.db"}},
		{map[string]string{"STATE_DATABASE_URL": url, "STATE_DATABASE_URL_FILE": "/run/secrets/db"}},
		{map[string]string{"STATE_DATABASE_URL": url, "STATE_DATABASE_MAX_CONNS": "0"}},
	} {
		_, err := Load(env(tc.env), noFiles)
		if err == nil {
			t.Errorf("%v: accepted", tc.env)
			continue
		}
		if strings.Contains(err.Error(), "s3cr3t-pw") {
			t.Errorf("%v: the error shows the password: %v", tc.env, err)
		}
	}
	// Without HOME or STATE_DB_PATH, SQLite has nowhere to live, but with
	// PostgreSQL it needs nowhere.
	if _, err := Load(env(map[string]string{"STATE_DATABASE_URL": url}), noFiles); err != nil {
		t.Errorf("PostgreSQL without HOME: %v", err)
	}
}

// TestJournalPath: the outcome journal lives beside the SQLite file, in the
// user's state directory with PostgreSQL, or where STATE_JOURNAL_PATH says;
// never in the state database's own files, and a deployment that can send
// orders without anywhere to keep their outcomes does not start.
func TestJournalPath(t *testing.T) {
	const pg = "postgres://storelink@db.internal:5432/storelink"
	for _, tc := range []struct {
		name string
		vars map[string]string
		want string
		err  string
	}{
		{"beside SQLite", map[string]string{"STATE_DB_PATH": "/srv/a/state.db"}, "/srv/a/state.db.outcomes.jsonl", ""},
		{"PostgreSQL, XDG", map[string]string{"STATE_DATABASE_URL": pg, "XDG_STATE_HOME": "/x", "HOME": "/h"}, "/x/storelink-mcp/outcomes.jsonl", ""},
		{"PostgreSQL, HOME", map[string]string{"STATE_DATABASE_URL": pg, "HOME": "/h"}, "/h/.local/state/storelink-mcp/outcomes.jsonl", ""},
		{"explicit", map[string]string{"STATE_DATABASE_URL": pg, "STATE_JOURNAL_PATH": "/vol/outcomes.jsonl"}, "/vol/outcomes.jsonl", ""},
		{"PostgreSQL, nowhere, read only", map[string]string{"STATE_DATABASE_URL": pg}, "", ""},
		{"PostgreSQL, nowhere, writes", map[string]string{"STATE_DATABASE_URL": pg, "ALLOW_WRITES": "true"}, "", "STATE_JOURNAL_PATH: neither it, XDG_STATE_HOME nor HOME is set"},
		{"the database itself", map[string]string{"STATE_DB_PATH": "/srv/a/state.db", "STATE_JOURNAL_PATH": "/srv/a/./state.db"}, "", "is the state database's own file"},
		{"its WAL", map[string]string{"STATE_DB_PATH": "/srv/a/state.db", "STATE_JOURNAL_PATH": "/srv/a/state.db-wal"}, "", "is the state database's own file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Load(env(tc.vars), noFiles)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if c.JournalPath != tc.want {
				t.Errorf("journal %q, want %q", c.JournalPath, tc.want)
			}
		})
	}
}

const (
	hookURL    = "https://hooks.korral.example/services/T0PATHTOKEN?key=QUERYTOKEN"
	hookSecret = "whsec-0123456789abcdef"
)

// approving is the environment of a server that stages orders.
func approving(extra map[string]string) map[string]string {
	m := map[string]string{"HOME": "/h", "ALLOW_WRITES": "true", "WRITE_APPROVAL": "required"}
	for k, v := range extra {
		m[k] = v
	}
	return m
}

func TestApprovalWebhook(t *testing.T) {
	c, err := Load(env(approving(map[string]string{
		"APPROVAL_WEBHOOK_URL":    hookURL,
		"APPROVAL_WEBHOOK_SECRET": hookSecret,
		"CONSOLE_PUBLIC_URL":      "https://approvals.korral.example/",
	})), noFiles)
	if err != nil {
		t.Fatal(err)
	}
	if c.ApprovalWebhookURL != hookURL || c.ApprovalWebhookSecret != hookSecret || c.ConsolePublicURL != "https://approvals.korral.example" {
		t.Errorf("got url %q secret set %t console %q", c.ApprovalWebhookURL, c.ApprovalWebhookSecret == hookSecret, c.ConsolePublicURL)
	}
	if c.WebhookHost() != "hooks.korral.example" {
		t.Errorf("WebhookHost = %q", c.WebhookHost())
	}
	var sb strings.Builder
	slog.New(slog.NewTextHandler(&sb, nil)).Info("config", "cfg", c)
	for _, out := range []string{fmt.Sprintf("%v", c), fmt.Sprintf("%+v", *c), c.String(), sb.String()} {
		for _, s := range []string{hookSecret, "T0PATHTOKEN", "QUERYTOKEN"} {
			if strings.Contains(out, s) {
				t.Errorf("printed config shows %q: %s", s, out)
			}
		}
		if !strings.Contains(out, "approval_webhook=hooks.korral.example") || !strings.Contains(out, "console_url=https://approvals.korral.example") {
			t.Errorf("printed config lacks the webhook's host or the console: %s", out)
		}
	}

	// From a file, with the editor's newline; plain http to loopback hosts.
	for _, u := range []string{"http://127.0.0.1:9000/hook", "http://[::1]:9000/hook", "http://localhost/hook", "https://user:tok@hooks.example/x"} {
		c, err = Load(env(approving(map[string]string{"APPROVAL_WEBHOOK_URL": u, "APPROVAL_WEBHOOK_SECRET_FILE": "/run/secrets/hook"})),
			files(map[string]string{"/run/secrets/hook": hookSecret + "\n"}))
		if err != nil || c.ApprovalWebhookURL != u || c.ApprovalWebhookSecret != hookSecret {
			t.Errorf("%s with a secret file: %v, %v", u, c, err)
		}
	}

	c, err = Load(env(map[string]string{"HOME": "/h"}), noFiles)
	if err != nil || c.ApprovalWebhookURL != "" || c.WebhookHost() != "" || !strings.Contains(c.String(), "approval_webhook=off") {
		t.Errorf("no webhook by default: %v, %v", c, err)
	}
}

func TestApprovalWebhookErrors(t *testing.T) {
	for _, tt := range []struct {
		name  string
		env   map[string]string
		files map[string]string
		want  []string
	}{
		{"plain http elsewhere", approving(map[string]string{"APPROVAL_WEBHOOK_URL": "http://hooks.korral.example/services/T0PATHTOKEN", "APPROVAL_WEBHOOK_SECRET": hookSecret}),
			nil, []string{`APPROVAL_WEBHOOK_URL: must use https; plain http is allowed only to a loopback host (127.0.0.1, ::1, localhost), not to "hooks.korral.example"`}},
		{"a name that only looks local", approving(map[string]string{"APPROVAL_WEBHOOK_URL": "http://127.0.0.1.evil.example/T0PATHTOKEN", "APPROVAL_WEBHOOK_SECRET": hookSecret}),
			nil, []string{"APPROVAL_WEBHOOK_URL: must use https"}},
		{"not http", approving(map[string]string{"APPROVAL_WEBHOOK_URL": "ftp://hooks.korral.example/T0PATHTOKEN", "APPROVAL_WEBHOOK_SECRET": hookSecret}),
			nil, []string{"APPROVAL_WEBHOOK_URL: must be an absolute https URL"}},
		{"relative", approving(map[string]string{"APPROVAL_WEBHOOK_URL": "hooks.korral.example/T0PATHTOKEN", "APPROVAL_WEBHOOK_SECRET": hookSecret}),
			nil, []string{"APPROVAL_WEBHOOK_URL: must be an absolute https URL"}},
		{"unparsable", approving(map[string]string{"APPROVAL_WEBHOOK_URL": "https://hooks.korral.example/T0PATHTOKEN%zz", "APPROVAL_WEBHOOK_SECRET": hookSecret}),
			nil, []string{"APPROVAL_WEBHOOK_URL: is not a URL"}},
		{"fragment", approving(map[string]string{"APPROVAL_WEBHOOK_URL": hookURL + "#T0PATHTOKEN", "APPROVAL_WEBHOOK_SECRET": hookSecret}),
			nil, []string{"APPROVAL_WEBHOOK_URL: must not have a fragment"}},
		{"url without secret", approving(map[string]string{"APPROVAL_WEBHOOK_URL": hookURL}),
			nil, []string{"APPROVAL_WEBHOOK_URL needs APPROVAL_WEBHOOK_SECRET or APPROVAL_WEBHOOK_SECRET_FILE"}},
		{"secret without url", approving(map[string]string{"APPROVAL_WEBHOOK_SECRET": hookSecret}),
			nil, []string{"APPROVAL_WEBHOOK_SECRET is set but APPROVAL_WEBHOOK_URL is not"}},
		{"short secret", approving(map[string]string{"APPROVAL_WEBHOOK_URL": hookURL, "APPROVAL_WEBHOOK_SECRET": "whsec-short"}),
			nil, []string{"APPROVAL_WEBHOOK_SECRET: must be at least 16 characters"}},
		{"short secret in a file", approving(map[string]string{"APPROVAL_WEBHOOK_URL": hookURL, "APPROVAL_WEBHOOK_SECRET_FILE": "/s"}),
			map[string]string{"/s": "whsec-short\n"}, []string{`APPROVAL_WEBHOOK_SECRET_FILE="/s": must be at least 16 characters`}},
		{"secret with a line break", approving(map[string]string{"APPROVAL_WEBHOOK_URL": hookURL, "APPROVAL_WEBHOOK_SECRET": hookSecret + "\nmore"}),
			nil, []string{"APPROVAL_WEBHOOK_SECRET: must not contain control characters"}},
		{"secret both ways", approving(map[string]string{"APPROVAL_WEBHOOK_URL": hookURL, "APPROVAL_WEBHOOK_SECRET": hookSecret, "APPROVAL_WEBHOOK_SECRET_FILE": "/s"}),
			map[string]string{"/s": hookSecret}, []string{"APPROVAL_WEBHOOK_SECRET and APPROVAL_WEBHOOK_SECRET_FILE are both set: keep one"}},
		{"secret file missing", approving(map[string]string{"APPROVAL_WEBHOOK_URL": hookURL, "APPROVAL_WEBHOOK_SECRET_FILE": "/nope"}),
			nil, []string{`APPROVAL_WEBHOOK_SECRET_FILE="/nope": cannot read the file`}},
		{"nothing is ever staged", map[string]string{"HOME": "/h", "APPROVAL_WEBHOOK_URL": hookURL, "APPROVAL_WEBHOOK_SECRET": hookSecret},
			nil, []string{`APPROVAL_WEBHOOK_URL is set but WRITE_APPROVAL is not "required"`}},
		{"console not http", map[string]string{"HOME": "/h", "CONSOLE_PUBLIC_URL": "approvals.korral.example"},
			nil, []string{`CONSOLE_PUBLIC_URL="approvals.korral.example": must be an absolute http or https URL`}},
		{"console with credentials", map[string]string{"HOME": "/h", "CONSOLE_PUBLIC_URL": "https://jana:" + hookSecret + "@approvals.korral.example"},
			nil, []string{"CONSOLE_PUBLIC_URL: must not contain credentials"}},
		{"console with a query", map[string]string{"HOME": "/h", "CONSOLE_PUBLIC_URL": "https://approvals.korral.example/?x=1"},
			nil, []string{`CONSOLE_PUBLIC_URL="https://approvals.korral.example/?x=1": must not have a query or fragment`}},
		{"console too long", map[string]string{"HOME": "/h", "CONSOLE_PUBLIC_URL": "https://approvals.korral.example/" + strings.Repeat("a", 300)},
			nil, []string{"CONSOLE_PUBLIC_URL: is 333 characters long; at most 256"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c, err := Load(env(tt.env), files(tt.files))
			if err == nil {
				t.Fatalf("Load succeeded: %v", c)
			}
			lines := strings.Split(err.Error(), "\n")
			if len(lines) != len(tt.want) {
				t.Errorf("got %d errors, want %d:\n%s", len(lines), len(tt.want), err)
			}
			for i, w := range tt.want {
				if i < len(lines) && !strings.HasPrefix(lines[i], w) {
					t.Errorf("error %d = %q\nwant prefix %q", i, lines[i], w)
				}
			}
			for _, s := range []string{hookSecret, "T0PATHTOKEN", "QUERYTOKEN"} {
				if strings.Contains(err.Error(), s) {
					t.Errorf("error shows %q: %s", s, err)
				}
			}
		})
	}
}

// mockNowText is how STORELINK_MOCK_NOW is written: empty for no pinned clock.
func mockNowText(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.Format(time.RFC3339)
}

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
