package notify

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestVerify(t *testing.T) {
	body := []byte(`{"event":"approval.staged","approval_id":"apr-1"}`)
	sent := time.Unix(1795857300, 0)
	good := Sign([]byte(secret), sent, body)
	old := Sign([]byte("the-secret-before-rotation"), sent, body)
	v1 := good[strings.Index(good, "v1="):]

	// The scheme is plain HMAC-SHA256 over "t.body", so any language's
	// standard library can check it.
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte("1795857300." + string(body)))
	if want := "t=1795857300,v1=" + hex.EncodeToString(m.Sum(nil)); good != want {
		t.Fatalf("Sign = %q, want %q", good, want)
	}

	for _, tc := range []struct {
		name   string
		header string
		body   []byte
		now    time.Time
		tol    time.Duration
		want   string // "" for valid
	}{
		{"valid", good, body, sent, 0, ""},
		{"valid with spaces and an unknown scheme", "t=1795857300, v2=abc, " + v1, body, sent, 0, ""},
		{"old and new secret during rotation", old + "," + v1, body, sent, 0, ""},
		{"late within tolerance", good, body, sent.Add(4 * time.Minute), 0, ""},
		{"early within tolerance", good, body, sent.Add(-4 * time.Minute), 0, ""},
		{"too late", good, body, sent.Add(6 * time.Minute), 0, "t is 6m0s away from now, more than 5m0s"},
		{"too early", good, body, sent.Add(-2 * time.Minute), time.Minute, "t is 2m0s away from now, more than 1m0s"},
		{"body changed", good, []byte(strings.Replace(string(body), "apr-1", "apr-2", 1)), sent, 0, "no v1 matches"},
		{"wrong secret", old, body, sent, 0, "no v1 matches"},
		{"timestamp changed", strings.Replace(good, "t=1795857300", "t=1795857301", 1), body, sent, 0, "no v1 matches"},
		{"empty", "", body, sent, 0, "is not key=value"},
		{"no timestamp", v1, body, sent, 0, "no t= timestamp"},
		{"two timestamps", "t=1795857300,t=1795857300," + v1, body, sent, 0, "more than one t"},
		{"no signature", "t=1795857300", body, sent, 0, "no v1= signature"},
		{"short signature", "t=1795857300,v1=abcd", body, sent, 0, "v1 is not 64 hex digits"},
		{"not hex", "t=1795857300,v1=" + strings.Repeat("z", 64), body, sent, 0, "v1 is not 64 hex digits"},
		{"timestamp not a number", "t=soon," + v1, body, sent, 0, "t is not a Unix time"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := Verify([]byte(secret), tc.header, tc.body, tc.now, tc.tol)
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("refused: %v", err)
			case tc.want != "" && err == nil:
				t.Errorf("accepted, want %q", tc.want)
			case tc.want != "" && (!errors.Is(err, ErrInvalidSignature) || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("error %v, want ErrInvalidSignature with %q", err, tc.want)
			}
		})
	}
}

// TestOperationsDocExample checks the signature worked out by hand in
// docs/operations.md, so an operator following it gets the header's v1.
func TestOperationsDocExample(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "..", "docs", "operations.md"))
	if err != nil {
		t.Skipf("docs not next to the module: %v", err)
	}
	m := regexp.MustCompile(`(?s)printf '%s' '([^']*)' > body\.json\n\$ t=(\d+) .*?-hmac '([^']*)' -r\n([0-9a-f]{64}) \*stdin`).FindSubmatch(b)
	if m == nil {
		t.Fatal("docs/operations.md has no worked signature example")
	}
	body, secret := m[1], m[3]
	unix, _ := strconv.ParseInt(string(m[2]), 10, 64)
	if got, want := Sign(secret, time.Unix(unix, 0), body), "t="+string(m[2])+",v1="+string(m[4]); got != want {
		t.Errorf("the document's example is wrong: Sign gives %s, the text %s", got, want)
	}
	if err := Verify(secret, "t="+string(m[2])+",v1="+string(m[4]), body, time.Unix(unix, 0), 0); err != nil {
		t.Errorf("Verify refuses the document's example: %v", err)
	}
}
