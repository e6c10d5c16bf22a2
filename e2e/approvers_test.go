package e2e_test

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/base64"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"golang.org/x/crypto/argon2"
	_ "modernc.org/sqlite"

	"github.com/korral/storelink/internal/e2etest"
)

// The approvers register through the binary: add, list, revoke, rotate.
// Secrets reach stdout once, and never the database, logs or stderr.

// generatedSecret is `approvers add`'s last line: 32 random bytes, unpadded base64url.
var generatedSecret = regexp.MustCompile(`(?m)^[A-Za-z0-9_-]{43}\n\z`)

// addApprover runs `approvers add` and returns the generated secret.
func addApprover(t *testing.T, env []string, args ...string) string {
	t.Helper()
	out, stderr, exit := e2etest.RunCLI(t, env, append([]string{"approvers", "add"}, args...)...)
	if exit != 0 || !generatedSecret.MatchString(out) || !strings.Contains(out, "shown once and not stored") {
		t.Fatalf("approvers add %v: exit %d\nstdout %q\nstderr %q", args, exit, out, stderr)
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	secret := lines[len(lines)-1]
	if strings.Contains(stderr, secret) || strings.Count(out, secret) != 1 {
		t.Errorf("approvers add %v: the secret is on stderr or printed more than once", args)
	}
	return secret
}

// storedVerifiers reads the register straight from the SQLite file.
func storedVerifiers(t *testing.T, path string) map[string]string {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.Query(`SELECT name, verifier FROM approvers WHERE revoked_at IS NULL`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var n, v string
		if err := rows.Scan(&n, &v); err != nil {
			t.Fatal(err)
		}
		out[n] = v
	}
	return out
}

// matches checks secret against an argon2id verifier with argon2 itself, not the code under test.
func matches(t *testing.T, encoded, secret string) bool {
	t.Helper()
	parts := strings.Split(encoded, "$")
	if len(parts) != 6 || parts[1] != "argon2id" || parts[2] != "v=19" {
		t.Fatalf("verifier %q is not argon2id v19", encoded)
	}
	var m, tm, p uint64
	for _, kv := range strings.Split(parts[3], ",") {
		k, v, _ := strings.Cut(kv, "=")
		n, _ := strconv.ParseUint(v, 10, 32)
		switch k {
		case "m":
			m = n
		case "t":
			tm = n
		case "p":
			p = n
		}
	}
	salt, err1 := base64.RawStdEncoding.DecodeString(parts[4])
	hash, err2 := base64.RawStdEncoding.DecodeString(parts[5])
	if err1 != nil || err2 != nil || m < 64*1024 || tm < 1 || p < 1 {
		t.Fatalf("verifier %q: m=%d t=%d p=%d (%v, %v)", encoded, m, tm, p, err1, err2)
	}
	return bytes.Equal(argon2.IDKey([]byte(secret), salt, uint32(tm), uint32(m), uint8(p), uint32(len(hash))), hash)
}

func TestApproversRegister(t *testing.T) {
	w := e2etest.NewWorld(t)
	logFile := filepath.Join(w.Dir, "server.log")
	env := w.Env()
	var stderrs []string
	run := func(stdin string, args ...string) (string, int) {
		t.Helper()
		out, stderr, exit := e2etest.RunCLIStdin(t, env, stdin, args...)
		stderrs = append(stderrs, stderr)
		return out, exit
	}
	if out, exit := run("", "approvers", "list"); exit != 0 || !strings.Contains(out, "(no approvers") {
		t.Fatalf("list of an empty register: exit %d: %s", exit, out)
	}

	jana := addApprover(t, env, "Jana Nováková", "--stores", "102, 47")
	out, exit := run("", "approvers", "list")
	if exit != 0 {
		t.Fatalf("list: exit %d", exit)
	}
	if !regexp.MustCompile(`(?m)^Jana Nováková\s+47,102\s+\d{4}-\d\d-\d\dT\S+Z\s+-$`).MatchString(out) {
		t.Errorf("list does not show Jana for stores 47 and 102, active:\n%s", out)
	}
	// A secret of the operator's choosing, from stdin (logs to a file this time).
	env = w.Env("LOG_FILE=" + logFile)
	const chosen = "correct horse battery staple"
	if out, exit := run(chosen+"\n", "approvers", "--secret-stdin", "add", "eva"); exit != 0 || strings.Contains(out, chosen) ||
		!strings.Contains(out, "added approver eva for every store") {
		t.Fatalf("add --secret-stdin: exit %d: %q", exit, out)
	}

	// Refusals: each says why on one line and changes nothing.
	before, _ := run("", "approvers", "list")
	stderrs = append(stderrs, checkApproverRefusals(t, env)...)
	if after, _ := run("", "approvers", "list"); after != before {
		t.Errorf("a refusal changed the register:\nbefore\n%s\nafter\n%s", before, after)
	}
	if out, stderr, exit := e2etest.RunCLI(t, nil, "approvers", "add", "--help"); exit != 0 || stderr != "" || !strings.HasPrefix(out, "Usage: storelink-mcp approvers add NAME") {
		t.Errorf("approvers add --help: exit %d, %q, %q", exit, out, stderr)
	}

	// What the file holds verifies the secrets it was given, and nothing else.
	v := storedVerifiers(t, w.StatePath)
	if len(v) != 2 || !matches(t, v["Jana Nováková"], jana) || !matches(t, v["eva"], chosen) || matches(t, v["eva"], jana) {
		t.Fatalf("stored verifiers %v do not match the secrets handed out", v)
	}

	// Revoke, then rotate: the same name with a new secret.
	if out, exit := run("", "approvers", "revoke", "jana nováková"); exit != 0 || !strings.Contains(out, "revoked approver Jana Nováková at ") {
		t.Fatalf("revoke: exit %d: %q", exit, out)
	}
	out, stderr, exit := e2etest.RunCLI(t, env, "approvers", "revoke", "Jana Nováková")
	stderrs = append(stderrs, stderr)
	if exit != 1 || out != "" || !strings.Contains(stderr, "Jana Nováková was already revoked at ") {
		t.Errorf("revoking twice: exit %d, %q, %q", exit, out, stderr)
	}
	if list, _ := run("", "approvers", "list"); !regexp.MustCompile(`(?m)^Jana Nováková\s+47,102\s+\S+Z\s+\d{4}-\S+Z$`).MatchString(list) {
		t.Errorf("list does not show Jana revoked:\n%s", list)
	}
	rotated := addApprover(t, env, "Jana Nováková", "--stores", "47")
	if rotated == jana {
		t.Fatal("rotation handed out the old secret again")
	}
	list, _ := run("", "approvers", "list")
	if strings.Count(list, "Jana Nováková") != 2 || strings.Contains(list, "$argon2id") {
		t.Errorf("list after rotation (both records, no verifier):\n%s", list)
	}
	if v := storedVerifiers(t, w.StatePath); !matches(t, v["Jana Nováková"], rotated) || matches(t, v["Jana Nováková"], jana) {
		t.Error("the active verifier is not the rotated secret's")
	}

	checkSecretsNowhere(t, w.StatePath, logFile, stderrs, jana, rotated, chosen)
}

// checkApproverRefusals runs commands that must be refused with one line and
// no stdout. It returns their stderr.
func checkApproverRefusals(t *testing.T, env []string) (stderrs []string) {
	t.Helper()
	for _, tc := range []struct {
		stdin string
		args  []string
		exit  int
		says  string
	}{
		{"", []string{"approvers"}, 2, "want add NAME, list or revoke NAME"},
		{"", []string{"approvers", "frob"}, 2, `unknown action "frob"`},
		{"", []string{"approvers", "add"}, 2, "missing the approver's NAME"},
		{"", []string{"approvers", "add", "Jana", "Nováková"}, 2, `unexpected argument "Nováková"`},
		{"", []string{"approvers", "list", "--stores", "47"}, 2, "belong to add"},
		{"", []string{"approvers", "add", "Petr\x1b[2J"}, 2, "may hold letters, digits"},
		{"", []string{"approvers", "add", "Petr", "--stores", "999"}, 2, "store 999 is not in the keyring (its stores: 47, 102)"},
		{"", []string{"approvers", "add", "Petr", "--stores", "47,,102"}, 2, "an empty store id"},
		{"", []string{"approvers", "add", "Petr", "--stores", "x1"}, 2, `store id "x1" is not 1 to 6 digits`},
		{"letmein\n", []string{"approvers", "add", "Petr", "--secret-stdin"}, 2, "7 characters, at least 16"},
		{"sixteen-chars-ok\nsecond line\n", []string{"approvers", "add", "Petr", "--secret-stdin"}, 2, "control character"},
		{"", []string{"approvers", "add", "JANA NOVÁKOVÁ"}, 1, "an active approver is already named JANA NOVÁKOVÁ"},
		{"", []string{"approvers", "revoke", "Nobody"}, 1, "no approver is named Nobody"},
		{"", []string{"approvers", "--bogus"}, 2, "flag provided but not defined: -bogus"},
	} {
		out, stderr, exit := e2etest.RunCLIStdin(t, env, tc.stdin, tc.args...)
		stderrs = append(stderrs, stderr)
		if exit != tc.exit || out != "" || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, tc.says) {
			t.Errorf("%q: exit %d (want %d), stdout %q, stderr %q (want %q)", tc.args, exit, tc.exit, out, stderr, tc.says)
		}
	}
	return stderrs
}

// checkSecretsNowhere: no secret is in the database files, the log file or stderr.
func checkSecretsNowhere(t *testing.T, statePath, logFile string, stderrs []string, secrets ...string) {
	t.Helper()
	logs, _ := os.ReadFile(logFile)
	var files []byte
	for _, suffix := range []string{"", "-wal", "-shm", "-journal"} {
		b, _ := os.ReadFile(statePath + suffix)
		files = append(files, b...)
	}
	if len(files) == 0 {
		t.Fatal("no state database file was read")
	}
	for _, secret := range secrets {
		if bytes.Contains(files, []byte(secret)) {
			t.Errorf("secret %.6s… is in the state database file", secret)
		}
		if bytes.Contains(logs, []byte(secret)) {
			t.Errorf("secret %.6s… is in the log file", secret)
		}
		for _, s := range stderrs {
			if strings.Contains(s, secret) {
				t.Errorf("secret %.6s… is on stderr: %q", secret, s)
			}
		}
	}
}

// TestApproversDemoKeyring: the demo checks --stores against the embedded StoreLink's stores.
func TestApproversDemoKeyring(t *testing.T) {
	env := demoEnv(t)
	if _, stderr, exit := e2etest.RunCLI(t, env, "approvers", "add", "Jana", "--stores", "5"); exit != 2 || !strings.Contains(stderr, "store 5 is not in the keyring (its stores: 47, 102)") {
		t.Errorf("a store outside the demo keyring: exit %d, %q", exit, stderr)
	}
	addApprover(t, env, "Jana", "--stores", "102")
	if out, _, _ := e2etest.RunCLI(t, env, "approvers", "list"); !regexp.MustCompile(`(?m)^Jana\s+102\s`).MatchString(out) {
		t.Errorf("list:\n%s", out)
	}
}

// TestApproversPostgres: one replica's changes are seen at another, and the database holds no secret.
func TestApproversPostgres(t *testing.T) {
	dsn := pgDatabase(t)
	w := e2etest.NewWorld(t)
	envA, dirA := replicaEnv(t, w, dsn)
	envB, dirB := replicaEnv(t, w, dsn)
	secret := addApprover(t, envA, "Jana", "--stores", "47")
	if out, _, exit := e2etest.RunCLI(t, envB, "approvers", "list"); exit != 0 || !regexp.MustCompile(`(?m)^Jana\s+47\s+\S+Z\s+-$`).MatchString(out) {
		t.Fatalf("list on the other replica: exit %d:\n%s", exit, out)
	}
	if _, stderr, exit := e2etest.RunCLI(t, envB, "approvers", "add", "jana"); exit != 1 || !strings.Contains(stderr, "already named jana") {
		t.Errorf("the same name from the other replica: exit %d, %q", exit, stderr)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	var verifier, dump string
	if err := c.QueryRow(ctx, `SELECT verifier FROM approvers WHERE name = 'Jana'`).Scan(&verifier); err != nil {
		t.Fatal(err)
	}
	if !matches(t, verifier, secret) {
		t.Error("the PostgreSQL verifier does not match the secret handed out")
	}
	if err := c.QueryRow(ctx, `SELECT string_agg(a::text, ' ') FROM approvers a`).Scan(&dump); err != nil || strings.Contains(dump, secret) {
		t.Errorf("the register's rows hold the secret (%v)", err)
	}
	if out, _, exit := e2etest.RunCLI(t, envB, "approvers", "revoke", "JANA"); exit != 0 || !strings.Contains(out, "revoked approver Jana") {
		t.Fatalf("revoke from the other replica: exit %d: %q", exit, out)
	}
	if out, _, _ := e2etest.RunCLI(t, envA, "approvers", "list"); regexp.MustCompile(`(?m)^Jana\s+47\s+\S+Z\s+-$`).MatchString(out) {
		t.Errorf("Jana still active on the first replica:\n%s", out)
	}
	noSQLite(t, dirA, dirB, w.Dir)
}

// registerApprover adds name with the test's secret, read from stdin.
func registerApprover(t *testing.T, env []string, name, secret string) {
	t.Helper()
	if out, stderr, exit := e2etest.RunCLIStdin(t, env, secret+"\n", "approvers", "add", name, "--secret-stdin"); exit != 0 {
		t.Fatalf("approvers add %s: exit %d\nstdout %q\nstderr %q", name, exit, out, stderr)
	}
}
