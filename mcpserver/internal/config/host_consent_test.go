package config

import (
	"bytes"
	"strings"
	"testing"
)

// TestHostConsent: WRITE_APPROVAL=host reads its sealing key from
// HOST_CONSENT_KEY_FILE and from nowhere else; without one it refuses to
// start with one line saying how to make one, and the key never appears
// in the configuration's summary or any error.
func TestHostConsent(t *testing.T) {
	const keyHex = "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff"
	host := map[string]string{"HOME": "/h", "ALLOW_WRITES": "true", "WRITE_APPROVAL": "host", "HOST_CONSENT_KEY_FILE": "/run/secrets/consent"}
	c, err := Load(env(host), files(map[string]string{"/run/secrets/consent": keyHex + "\n"}))
	if err != nil || c.WriteApproval != ApprovalHost || len(c.HostConsentKey) != 32 || !bytes.Equal(c.HostConsentKey[:2], []byte{0x00, 0x11}) {
		t.Fatalf("host mode with a key file: %v, %v", c, err)
	}
	if s := c.String() + " " + strings.Join([]string{c.LogValue().String()}, ""); strings.Contains(s, keyHex) || strings.Contains(s, "consent") && strings.Contains(s, "0011") {
		t.Errorf("the summary shows the key: %s", s)
	}

	without := func(m map[string]string, drop string) map[string]string {
		out := map[string]string{}
		for k, v := range m {
			if k != drop {
				out[k] = v
			}
		}
		return out
	}
	for _, tc := range []struct {
		name  string
		env   map[string]string
		files map[string]string
		want  string
	}{
		{"no key", without(host, "HOST_CONSENT_KEY_FILE"), nil,
			"WRITE_APPROVAL=host needs HOST_CONSENT_KEY_FILE: write a key with `openssl rand -hex 32 > FILE`"},
		{"an inline key is no key", with(without(host, "HOST_CONSENT_KEY_FILE"), "HOST_CONSENT_KEY", keyHex), nil,
			"WRITE_APPROVAL=host needs HOST_CONSENT_KEY_FILE"},
		{"unreadable", host, nil, `HOST_CONSENT_KEY_FILE="/run/secrets/consent": cannot read the file`},
		{"short key", host, map[string]string{"/run/secrets/consent": keyHex[:32]}, `HOST_CONSENT_KEY_FILE="/run/secrets/consent": must hold 64 hexadecimal digits`},
		{"not hex", host, map[string]string{"/run/secrets/consent": strings.Repeat("zz", 32)}, "must hold 64 hexadecimal digits"},
		{"key without host mode", with(without(host, "WRITE_APPROVAL"), "WRITE_APPROVAL", "none"), map[string]string{"/run/secrets/consent": keyHex},
			`HOST_CONSENT_KEY_FILE is set but WRITE_APPROVAL is not "host"`},
		{"writes off", without(host, "ALLOW_WRITES"), map[string]string{"/run/secrets/consent": keyHex}, "WRITE_APPROVAL=host has no effect unless ALLOW_WRITES=true"},
		{"read only", with(without(host, "ALLOW_WRITES"), "READ_ONLY", "true"), map[string]string{"/run/secrets/consent": keyHex}, "WRITE_APPROVAL=host and READ_ONLY=true contradict each other"},
	} {
		_, err := Load(env(tc.env), files(tc.files))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err=%v, want %q", tc.name, err, tc.want)
			continue
		}
		if strings.Contains(err.Error(), keyHex[:32]) || strings.Contains(err.Error(), "zzzz") {
			t.Errorf("%s: the error quotes the key: %v", tc.name, err)
		}
		if tc.name == "no key" && strings.Count(err.Error(), "\n") != 0 {
			t.Errorf("no key: not one line: %q", err)
		}
	}
}

func with(m map[string]string, k, v string) map[string]string {
	out := map[string]string{k: v}
	for k2, v2 := range m {
		if k2 != k {
			out[k2] = v2
		}
	}
	return out
}
