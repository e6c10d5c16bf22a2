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
	// approverCred differs from cred so a leak of either is caught.
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

// problem is a configuration Load must refuse (with HOME=/h unless env
// sets it), and the prefixes of the messages it must give, in order.
type problem struct {
	name  string
	env   map[string]string
	files map[string]string
	want  []string
}

// refuses runs Load on each problem and checks its messages; none may
// refuses runs Load on each problem and checks its messages for secrets.
func refuses(t *testing.T, cases []problem, secrets ...string) {
	t.Helper()
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			e := map[string]string{"HOME": "/h"}
			for k, v := range tt.env {
				e[k] = v
			}
			c, err := Load(env(e), files(tt.files))
			if err != nil && c != nil {
				t.Errorf("Load returned a config with an error")
			}
			wantProblems(t, err, tt.want, secrets...)
		})
	}
}

// wantProblems checks that err lists one message per entry of want, each
// wantProblems checks err has one message per want prefix, and no secret.
func wantProblems(t *testing.T, err error, want []string, secrets ...string) {
	t.Helper()
	if err == nil {
		t.Fatal("Load succeeded")
	}
	lines := strings.Split(err.Error(), "\n")
	if len(lines) != len(want) {
		t.Errorf("got %d errors, want %d:\n%s", len(lines), len(want), err)
	}
	for i, w := range want {
		if i < len(lines) && !strings.HasPrefix(lines[i], w) {
			t.Errorf("error %d = %q\nwant prefix %q", i, lines[i], w)
		}
	}
	for _, s := range secrets {
		if strings.Contains(err.Error(), s) {
			t.Errorf("error shows %q: %s", s, err)
		}
	}
}

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

		UpstreamCallerShare: 50, CallerBurst: 20,

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
		"LOG_FILE":               "/var/log/storelink-mcp.log",
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

		"UPSTREAM_CALLER_SHARE_PERCENT": "30", "MCP_CALLER_CALLS_PER_MINUTE": "90", "MCP_CALLER_BURST": "9",

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
		LogFile:             "/var/log/storelink-mcp.log",
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

		UpstreamCallerShare: 30, CallerCallsPerMinute: 90, CallerBurst: 9,

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

// mockNowText is how STORELINK_MOCK_NOW is written: empty for no pinned clock.
func mockNowText(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.Format(time.RFC3339)
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
	// refuses this combination (CheckRun).
	c, err := Load(env(map[string]string{"HOME": "/h", "STORELINK_KEYRING": krJSON}), noFiles)
	if err != nil || c.Keyring.Len() != 2 || !strings.Contains(c.String(), "upstream=embedded-demo keyring=keyring{47:") {
		t.Errorf("%v, %v", c, err)
	}
}

// TestSettingsCoverLoad checks that every variable Load reads is a row of
// the settings table and every row is read.
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
	// Blank every variable first so the runner's environment cannot leak in.
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
		// The read error becomes a message, not a *fs.PathError.
		t.Errorf("missing file: err = %v", err)
	}
}
