package e2e_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/korral/storelink/internal/e2etest"
)

// docCommand is one command line of a document, continuation lines joined
// and a trailing comment dropped.
type docCommand struct{ doc, section, text string }

// commandStart is how a command line of an indented block begins; other
// indented blocks (a folder tree, a go.mod excerpt) are not commands.
var commandStart = regexp.MustCompile(`^(go|make|bin/|storelink-mcp|eval|scripts/|git|npm|node|curl|claude|openssl|umask|printf|[A-Z_]+=)`)

// docCommands returns the commands of a document: every line of its sh
// blocks, and every command line of its indented blocks.
func docCommands(t *testing.T, rel string) []docCommand {
	t.Helper()
	b, err := os.ReadFile(e2etest.Path(t, rel))
	if err != nil {
		t.Fatal(err)
	}
	var out []docCommand
	section, fenced, shBlock, indented := "", false, false, false
	var pending string
	for _, raw := range strings.Split(string(b), "\n") {
		trimmed := strings.TrimSpace(raw)
		switch {
		case strings.HasPrefix(trimmed, "```"):
			fenced, shBlock = !fenced, !fenced && trimmed == "```sh"
			continue
		case !fenced && strings.HasPrefix(raw, "#"):
			section = strings.TrimLeft(raw, "# ")
		}
		isIndented := !fenced && strings.HasPrefix(raw, "    ") && (indented || pending != "" || commandStart.MatchString(trimmed))
		indented = isIndented || (indented && trimmed == "")
		if !(fenced && shBlock) && !isIndented {
			continue
		}
		line := pending + trimmed
		if strings.HasSuffix(line, `\`) {
			pending = strings.TrimSuffix(line, `\`)
			continue
		}
		pending = ""
		line = strings.TrimSpace(regexp.MustCompile(`\s+# .*$`).ReplaceAllString(line, ""))
		if line == "" || strings.HasPrefix(line, "#") || (isIndented && !commandStart.MatchString(line)) {
			continue
		}
		out = append(out, docCommand{rel, section, strings.Join(strings.Fields(line), " ")})
	}
	return out
}

// runBlock runs one document command with bash in dir; it fails the test
// unless the command exits 0.
func runBlock(t *testing.T, dir string, env []string, line string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-euo", "pipefail", "-c", line)
	cmd.Dir, cmd.Env, cmd.Stdin = dir, env, strings.NewReader("")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", line, err, out)
	}
	return string(out)
}

// docBin builds bin/storelink-mcp with the documents' own build line, from
// the repository's root (bin/ is ignored by git), and returns a folder of
// the reader's own in which bin/ is that folder.
func docBin(t *testing.T, build string) string {
	t.Helper()
	if build != "go build -o bin/storelink-mcp ./cmd/storelink-mcp" {
		t.Fatalf("the build line is now %q; the test runs bin/storelink-mcp after it", build)
	}
	runBlock(t, e2etest.Root(t), os.Environ(), build)
	dir := t.TempDir()
	if err := os.Symlink(e2etest.Path(t, "bin"), filepath.Join(dir, "bin")); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestReadmeServerCommands runs the README's "Running the MCP server"
// block as printed, against a mock StoreLink; only the log file's path is
// moved into the test's folder.
func TestReadmeServerCommands(t *testing.T) {
	if os.Getenv("CI") != "true" {
		t.Skip("builds the server with the README's commands; CI=true runs it")
	}
	var block []string
	for _, c := range docCommands(t, "README.md") {
		if c.section == "Running the MCP server" && (strings.HasPrefix(c.text, "go ") || strings.HasPrefix(c.text, "bin/")) {
			block = append(block, c.text)
		}
	}
	if len(block) != 6 {
		t.Fatalf("the block shows %d commands, the test knows 6: %q", len(block), block)
	}
	w := e2etest.NewWorld(t)
	env := append(os.Environ(), w.Env()...)
	// go run keeps the caller's HOME (its module and build caches); the
	// server's state goes to the test's folder.
	runBlock(t, e2etest.Root(t), append(os.Environ(), "STATE_DB_PATH="+w.StatePath), block[0])
	dir := docBin(t, block[1])
	if out := runBlock(t, dir, env, block[2]); !strings.Contains(out, "ok ") || strings.Contains(out, "FAIL") {
		t.Errorf("doctor: %s", out)
	}
	logFile := filepath.Join(w.Dir, "storelink-mcp.log")
	runBlock(t, dir, env, strings.ReplaceAll(block[3], "/var/log/storelink-mcp.log", logFile))
	if b, err := os.ReadFile(logFile); err != nil || !strings.Contains(string(b), `"server.stop"`) {
		t.Errorf("--log-file: %v %s", err, b)
	}
	if out := runBlock(t, dir, env, block[4]); !strings.Contains(out, "Usage:") {
		t.Errorf("--help: %s", out)
	}
	if out := runBlock(t, dir, env, block[5]); !strings.HasPrefix(out, "storelink-mcp ") {
		t.Errorf("--version: %s", out)
	}
}

// serveBlock starts a document's serve command with bash, its address
// replaced by a free loopback port, and returns the base URL once the
// server logs http.listening; it stops with the test.
func serveBlock(t *testing.T, dir string, env []string, lines []string, addr string) string {
	t.Helper()
	free := freeAddr(t)
	startBlock(t, dir, env, strings.ReplaceAll(strings.Join(lines, "\n"), addr, free), "http.listening")
	return "http://" + free
}

// freeAddr is a loopback address with a port nobody listens on now.
func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// startBlock starts script with bash in dir and returns once the process
// logs the message ready on stderr; it stops with the test.
func startBlock(t *testing.T, dir string, env []string, script, ready string) {
	t.Helper()
	cmd := exec.Command("bash", "-euo", "pipefail", "-c", script)
	cmd.Dir, cmd.Env = dir, env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		_ = cmd.Wait()
	})
	sc := bufio.NewScanner(stderr)
	var seen []string
	for sc.Scan() {
		var line map[string]any
		if json.Unmarshal(sc.Bytes(), &line) == nil && line["msg"] == ready {
			go func() { _, _ = io.Copy(io.Discard, stderr) }()
			return
		}
		seen = append(seen, sc.Text())
	}
	t.Fatalf("%s: the process never logged %s:\n%s", script, ready, strings.Join(seen, "\n"))
}

// consoleDocAddr is the address the README starts the console on.
const consoleDocAddr = "127.0.0.1:8090"

// TestReadmeApprovalsConsoleCommands runs the README's "Approvals console"
// block as printed, with storelink-mcp on PATH, in a temporary HOME with
// the server's environment that docs/operations.md lists (a mock
// StoreLink, its keyring, writes on, approval required): it registers Jana
// Novak for store 47, starts the console, and logs in with the secret the
// first command printed. The console takes 127.0.0.1:8090 as printed when
// that port is free; when something else holds it (another test, another
// program on the machine) the command runs on a free port instead and the
// test says so, rather than fail for a port it does not own.
func TestReadmeApprovalsConsoleCommands(t *testing.T) {
	var block []string
	for _, c := range docCommands(t, "README.md") {
		if c.section == "Approvals console" && strings.HasPrefix(c.text, "storelink-mcp ") {
			block = append(block, c.text)
		}
	}
	if len(block) != 2 || !strings.Contains(block[1], consoleDocAddr) {
		t.Fatalf("the block is now %q; the test knows approvers add and console --listen %s", block, consoleDocAddr)
	}
	w := e2etest.NewWorld(t)
	env := append([]string{"PATH=" + filepath.Dir(e2etest.Binary(t)) + ":" + os.Getenv("PATH")},
		w.Env("ALLOW_WRITES=true", "WRITE_APPROVAL=required")...)
	out := runBlock(t, w.Dir, env, block[0])
	lines := strings.Fields(strings.TrimSpace(out))
	if !strings.Contains(strings.ToLower(out), "added approver jana novak for store(s) 47") || len(lines) == 0 {
		t.Fatalf("approvers add printed %q", out)
	}
	secret := lines[len(lines)-1]

	script, addr := block[1], consoleDocAddr
	if l, err := net.Listen("tcp", consoleDocAddr); err != nil {
		addr = freeAddr(t)
		script = strings.ReplaceAll(script, consoleDocAddr, addr)
		t.Logf("%s is taken (%v): the console runs on %s instead", consoleDocAddr, err, addr)
	} else {
		_ = l.Close()
	}
	startBlock(t, w.Dir, env, script, "console.start")
	consoleLogInAs(t, "http://"+addr, "Jana Novak", secret)
}

// consoleLogInAs logs in to the console at base and checks the inbox
// opens under the approver's name.
func consoleLogInAs(t *testing.T, base, name, secret string) {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	client := &http.Client{Jar: jar, Timeout: 10 * time.Second}
	res, err := client.Get(base + "/")
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(res.Body)
	_ = res.Body.Close()
	m := regexp.MustCompile(`name="csrf" value="([^"]+)"`).FindSubmatch(page)
	if res.StatusCode != http.StatusOK || m == nil {
		t.Fatalf("GET /: %d, no log-in form:\n%s", res.StatusCode, page)
	}
	res, err = client.PostForm(base+"/login", url.Values{"csrf": {string(m[1])}, "name": {name}, "secret": {secret}})
	if err != nil {
		t.Fatal(err)
	}
	page, _ = io.ReadAll(res.Body)
	_ = res.Body.Close()
	if res.StatusCode != http.StatusOK || !strings.Contains(string(page), "<h1>Orders waiting for you</h1>") || !strings.Contains(string(page), name) {
		t.Errorf("logging in as %s: %d, no inbox:\n%s", name, res.StatusCode, page)
	}
}

// TestMCPClientsServeCommands runs docs/mcp-clients.md's build line and its
// token-file and serve block as printed (the port made free), then calls
// the endpoint with the token the block wrote.
func TestMCPClientsServeCommands(t *testing.T) {
	if os.Getenv("CI") != "true" {
		t.Skip("builds the server with the document's commands; CI=true runs it")
	}
	cmds := docCommands(t, "docs/mcp-clients.md")
	dir := docBin(t, cmds[0].text)
	var block []string
	for _, c := range cmds {
		if c.section == "Start the server" {
			block = append(block, c.text)
		}
	}
	// The first sh block: the token file and the server on loopback.
	if len(block) < 3 || !strings.Contains(block[2], "serve --http 127.0.0.1:8080") {
		t.Fatalf("the block is now %q", block)
	}
	w := e2etest.NewWorld(t)
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + w.Dir, "STATE_DB_PATH=" + w.StatePath}
	base := serveBlock(t, dir, env, block[:3], "127.0.0.1:8080")
	tokens, err := os.ReadFile(filepath.Join(dir, "tokens.txt"))
	if err != nil {
		t.Fatal(err)
	}
	fields := strings.Fields(string(tokens))
	if fi, err := os.Stat(filepath.Join(dir, "tokens.txt")); err != nil || fi.Mode().Perm() != 0o600 || len(fields) != 2 {
		t.Fatalf("tokens.txt: %v %v %q", err, fi, tokens)
	}
	for token, want := range map[string]int{fields[1]: http.StatusOK, "not-the-token": http.StatusUnauthorized} {
		req, _ := http.NewRequest(http.MethodPost, base+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("MCP-Protocol-Version", "2025-11-25")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_ = res.Body.Close()
		if (res.StatusCode == http.StatusUnauthorized) != (want == http.StatusUnauthorized) {
			t.Errorf("token %q: status %d", token[:4], res.StatusCode)
		}
	}
}

// docCommandRuns says, for every command the three user documents show,
// which test runs it as printed ("TestName", a test of a file that reads
// the document; a command two documents show names a test of each), which target of make ci runs it ("make ci: TARGET"), or
// why nothing runs it ("not run: ..."). A new command fails
// TestEveryDocCommandIsAccountedFor until it is added here.
var docCommandRuns = map[string]string{
	"make demo": "not run: the program behind it is what check-transcript runs; a cold first run takes minutes",
	"make ci":   "make ci: ci",
	`eval "$(scripts/postgres-test.sh start)"`: "make ci: scripts/postgres-test.sh start",
	"scripts/postgres-test.sh stop":            "make ci: scripts/postgres-test.sh stop",
	"make release":                             "make ci: release-check",
	"make image":                               "make ci: release-check",
	"make release-check":                       "make ci: release-check",
	"claude mcp add korral-storelink --env UPSTREAM_BASE_URL=https://storelink.korral.example --env STORELINK_KEYRING_FILE=$HOME/.config/storelink/keyring.json -- $HOME/.local/bin/storelink-mcp stdio": "TestReadmeClaudeCodeInstall",
	"go run ./cmd/storelink-mcp":                                          "TestReadmeServerCommands",
	"go build -o bin/storelink-mcp ./cmd/storelink-mcp":                   "TestReadmeServerCommands",
	"bin/storelink-mcp doctor":                                            "TestReadmeServerCommands",
	"bin/storelink-mcp --read-only --log-file /var/log/storelink-mcp.log": "TestReadmeServerCommands",
	"bin/storelink-mcp --help":                                            "TestReadmeServerCommands",
	"bin/storelink-mcp --version":                                         "TestReadmeServerCommands",
	`storelink-mcp approvers add "Jana Novak" --stores 47`:                "TestReadmeApprovalsConsoleCommands",
	"storelink-mcp console --listen 127.0.0.1:8090":                       "TestReadmeApprovalsConsoleCommands",
	"openssl rand -hex 32 > /etc/storelink-mcp/consent.key && chmod 600 /etc/storelink-mcp/consent.key": "not run: writes /etc; e2e/host_consent_test.go makes its key in a temporary folder",
	"go mod init example.com/replenish-bot": "TestReadmeClientInstallFromAFreshFolder",
	"go mod edit -require=github.com/korral/storelink/storelinkclient@v0.0.0 -replace=github.com/korral/storelink/storelinkclient=../storelink/storelinkclient": "TestReadmeClientInstallFromAFreshFolder",
	"go mod tidy":    "TestReadmeClientInstallFromAFreshFolder",
	"go build ./...": "TestReadmeClientInstallFromAFreshFolder, TestFirstHourDocRuns",
	"go get github.com/korral/storelink/storelinkclient@v0.1.0":                                     "TestDistClientReleaseAndFetch",
	"go env -w GOPRIVATE=github.com/korral/*":                                                       "TestDistClientReleaseAndFetch",
	`git config --global url."ssh://git@github.com/korral/".insteadOf "https://github.com/korral/"`: "TestDistClientReleaseAndFetch",
	"make release-client VERSION=v0.2.0":                                                            "TestDistClientReleaseAndFetch",
	"go run ./cmd/storelink-contract check --base-url https://storelink.korral.example --keyring-file keyring.json --sku 8847291 [--format table|json|junit]": "not run: a synopsis with optional flags; docs/contract-checker.md's examples run",
	"make contract-demo":    "not run: make contract-demo runs storelink-contract demo, which cmd/storelink-contract's tests run",
	"make spec-diff":        "make ci: spec-diff",
	"make transcript":       "not run: it rewrites a committed file; check-transcript runs the same program",
	"make check-transcript": "make ci: check-transcript",
	"make eval":             "make ci: eval",
	// docs/contract-checker.md
	"go build -o bin/storelink-contract ./cmd/storelink-contract":                                                                                                                                                                                      "TestDocCommands",
	"bin/storelink-contract check --base-url https://storelink.korral.example --keyring-file ~/storelink-keyring.json --sku 8847291 --order RO-47-000123":                                                                                              "TestDocCommands",
	"bin/storelink-contract check --base-url http://127.0.0.1:4010 --keyring-file keyring.json --no-assumptions":                                                                                                                                       "TestDocCommands",
	"bin/storelink-contract check --base-url http://127.0.0.1:8092 --keyring-file keyring.json --sku 8801111 --generate --seed 42 --max-requests 400 --rate 100/s --deadline 60s --allow-writes --write-store 47 --replay-out storelink-failures.json": "TestDocCommands",
	"bin/storelink-contract replay storelink-failures.json --keyring-file keyring.json --allow-writes --write-store 47":                                                                                                                                "TestDocCommands",
	"bin/storelink-contract proxy --listen 127.0.0.1:8089 --upstream https://storelink.korral.example --findings storelink-findings.jsonl":                                                                                                             "TestDocCommands",
	"go run ./conformance/foreignstorelink/foreign-storelink -addr 127.0.0.1:8091 -keyring-out foreign-keyring.json":                                                                                                                                   "TestDocCommands",
	"bin/storelink-contract check --base-url http://127.0.0.1:8091 --keyring-file foreign-keyring.json --allow-writes --write-store 47":                                                                                                                "TestDocCommands",
	"bin/storelink-contract check --base-url http://127.0.0.1:8091 --keyring-file foreign-keyring.json --allow-writes --write-store 47 --format json > foreign-findings.json":                                                                          "TestDocCommands",
	"bin/storelink-contract suggest foreign-findings.json --out storelink-suggested.yaml > storelink.patch":                                                                                                                                            "TestDocCommands",
	"bin/storelink-contract check --spec storelink-suggested.yaml --base-url http://127.0.0.1:8091 --keyring-file foreign-keyring.json --allow-writes --write-store 47":                                                                                "TestDocCommands",
	"go run ./conformance/zoo/zoo-storelink -member request-quantity -addr 127.0.0.1:8091 -keyring-out keyring.json":                                                                                                                                   "TestFirstHourDocRuns",
	"go run ./cmd/storelink-contract check --base-url http://127.0.0.1:8091 --keyring-file keyring.json --allow-writes --write-store 47 --format json > report.json":                                                                                   "TestFirstHourDocRuns",
	"go run ./cmd/storelink-contract suggest report.json > contract.patch":                                                                                                                                                                             "TestFirstHourDocRuns",
	"git apply contract.patch": "TestFirstHourDocRuns",
	"make generate":            "TestFirstHourDocRuns",
	"go run ./cmd/storelink-contract check --base-url http://127.0.0.1:8091 --keyring-file keyring.json --allow-writes --write-store 47":                      "TestFirstHourDocRuns",
	"UPSTREAM_BASE_URL=http://127.0.0.1:8091 STORELINK_KEYRING_FILE=keyring.json go run ./cmd/storelink-mcp doctor":                                           "TestFirstHourDocRuns",
	`bin/storelink-contract check --base-url "$STORELINK_URL" --keyring-file "$STORELINK_KEYRING_FILE" --sku 8847291 --format junit > storelink-contract.xml`: "TestDocCommands",
	// docs/mcp-clients.md
	"umask 077": "TestMCPClientsServeCommands",
	`printf 'claude-dairy %s\n' "$(openssl rand -base64 32)" > tokens.txt`:                                                                     "TestMCPClientsServeCommands",
	"MCP_AUTH_TOKENS_FILE=$PWD/tokens.txt bin/storelink-mcp serve --http 127.0.0.1:8080":                                                       "TestMCPClientsServeCommands",
	"MCP_AUTH_TOKENS_FILE=/etc/storelink/tokens.txt bin/storelink-mcp serve --http 0.0.0.0:8080 --allowed-host mcp.korral.example --stateless": "not run as printed: reads /etc and listens on every interface; e2e/http_test.go runs serve --stateless",
	`curl -sS http://127.0.0.1:8080/mcp -H "Authorization: Bearer $STORELINK_MCP_TOKEN" -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' -H 'MCP-Protocol-Version: 2026-07-28' -H 'Mcp-Method: server/discover' -d '{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}'`: "TestClientsDocDiscoverCommand",
	"OAUTH_ISSUER=https://login.korral.example/realms/buyers MCP_PUBLIC_URL=https://mcp.korral.example bin/storelink-mcp serve --http 0.0.0.0:8080 --allowed-host mcp.korral.example --stateless":                                                                                                                                                                                                                                         "not run as printed: needs Korral's identity provider; e2e/oauth_test.go runs the same settings against a test issuer",
	"npm install --prefix .tools/inspector-2.12.0 @modelcontextprotocol/inspector@2.12.0":                                                                                                                            "make ci: inspector",
	"INSPECTOR=.tools/inspector-2.12.0/node_modules/@modelcontextprotocol/inspector/clients/launcher/build/index.js":                                                                                                 "make ci: inspector",
	"node $INSPECTOR --cli -q --method tools/list -e STATE_DB_PATH=/tmp/inspector.db -- bin/storelink-mcp":                                                                                                           "make ci: inspector",
	`node $INSPECTOR --cli -q --format json --method tools/call --tool-name korral_check_stock_risk --tool-args-json '{"sku": "8847291", "store_id": "47"}' -e STATE_DB_PATH=/tmp/inspector.db -- bin/storelink-mcp`: "make ci: inspector",
	`node $INSPECTOR --cli -q --method tools/list http://127.0.0.1:8080/mcp --header "Authorization: Bearer $STORELINK_MCP_TOKEN"`:                                                                                   "make ci: inspector",
}

// userDocs are the documents whose every command is accounted for.
var userDocs = []string{"README.md", "docs/contract-checker.md", "docs/mcp-clients.md"}

// TestEveryDocCommandIsAccountedFor: every command of the user documents
// is in docCommandRuns; a named test exists in a file that reads that
// document, and a make ci target is one make ci runs.
func TestEveryDocCommandIsAccountedFor(t *testing.T) {
	tests := testFunctions(t)
	ci := ciRuns(t)
	seen := map[string]bool{}
	for _, doc := range userDocs {
		for _, c := range docCommands(t, doc) {
			seen[c.text] = true
			how, ok := docCommandRuns[c.text]
			switch target, isCI := strings.CutPrefix(how, "make ci: "); {
			case !ok:
				t.Errorf("%s (%s): %q: no test runs it; run it in a test and add it to docCommandRuns", c.doc, c.section, c.text)
			case isCI:
				if !ci[target] {
					t.Errorf("%q: make ci does not run %s", c.text, target)
				}
			case strings.HasPrefix(how, "Test"):
				// A command two documents show names a test of each.
				if !slices.ContainsFunc(strings.Split(how, ", "), func(name string) bool {
					return strings.Contains(tests[name], filepath.Base(doc))
				}) {
					t.Errorf("%q: %s is not a test of a file that reads %s", c.text, how, doc)
				}
			case !strings.HasPrefix(how, "not run"):
				t.Errorf("%q: %q is not a test, a make ci target or a reason", c.text, how)
			}
		}
	}
	for cmd := range docCommandRuns {
		if !seen[cmd] {
			t.Errorf("docCommandRuns lists %q, which no document shows any more", cmd)
		}
	}
}

// testFunctions maps each Test function of the repository to the text of
// its file.
func testFunctions(t *testing.T) map[string]string {
	t.Helper()
	out := map[string]string{}
	decl := regexp.MustCompile(`(?m)^func (Test\w+)\(`)
	err := filepath.WalkDir(e2etest.Root(t), func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".tools" || d.Name() == "node_modules" || d.Name() == ".git") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, "_test.go") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, m := range decl.FindAllStringSubmatch(string(b), -1) {
			out[m[1]] = string(b)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// ciRuns is what make ci runs: the ci target's prerequisites, "ci" itself,
// and every line of .ci/run.
func ciRuns(t *testing.T) map[string]bool {
	t.Helper()
	mk, err := os.ReadFile(e2etest.Path(t, "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	run, err := os.ReadFile(e2etest.Path(t, ".ci/run"))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	if m := regexp.MustCompile(`(?m)^ci:([^#\n]*)`).FindStringSubmatch(string(mk)); m != nil {
		for _, target := range strings.Fields(m[1]) {
			out[target] = true
		}
	}
	for _, want := range []string{"make ci", "scripts/postgres-test.sh start", "scripts/postgres-test.sh stop"} {
		if strings.Contains(string(run), want) {
			out[strings.TrimPrefix(want, "make ")] = true
		}
	}
	return out
}
