package config

import (
	"testing"
)

// TestErrors: each malformed or out-of-range value is refused with a
// message naming the variable and the fix, and no message shows a secret.
func TestErrors(t *testing.T) {
	refuses(t, []problem{
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
	}, keyA, keyB, cred, approverCred)
}

// TestKeyringAndRuleErrors: the keyring, the rules spanning several
// settings and the removed variables are refused with the fix; every
// problem is reported at once, in the table's order.
func TestKeyringAndRuleErrors(t *testing.T) {
	refuses(t, []problem{
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
	}, keyA, keyB, cred, approverCred)
}
