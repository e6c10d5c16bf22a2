package config

import (
	"fmt"
	"log/slog"
	"strings"
	"testing"
)

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
	refuses(t, []problem{
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
	}, hookSecret, "T0PATHTOKEN", "QUERYTOKEN")
}
