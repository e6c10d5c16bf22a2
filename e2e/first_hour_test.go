package e2e_test

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/korral/storelink/internal/e2etest"
)

// firstHour is the docs/contract-checker.md section this test runs, in a
// copy of the repository.
const firstHour = "## Meeting your StoreLink: the first hour"

// firstHourCommands returns the section's sh command lines, in order.
func firstHourCommands(t *testing.T) []string {
	t.Helper()
	doc, err := os.ReadFile(filepath.Join(e2etest.Root(t), "docs", "contract-checker.md"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(doc)
	start := strings.Index(text, "\n"+firstHour+"\n")
	if start < 0 {
		t.Fatalf("docs/contract-checker.md has no section %q", firstHour)
	}
	text = text[start+1:]
	if end := strings.Index(text, "\n## "); end >= 0 {
		text = text[:end]
	}
	var out []string
	for _, m := range regexp.MustCompile("(?ms)^ *```sh\n(.*?)^ *```\n").FindAllStringSubmatch(text, -1) {
		for _, l := range strings.Split(strings.TrimRight(m[1], "\n"), "\n") {
			out = append(out, strings.TrimSpace(l))
		}
	}
	return out
}

// TestFirstHourDocRuns runs "Meeting your StoreLink: the first hour" as
// written: drift found, patch applied, generate and build need no edit, the
// second check conforms and doctor reads every store.
func TestFirstHourDocRuns(t *testing.T) {
	if testing.Short() {
		t.Skip("regenerates and builds a copy of the repository")
	}
	lines := firstHourCommands(t)
	if len(lines) != 8 {
		t.Fatalf("the section shows %d commands, the test knows 8: %q", len(lines), lines)
	}
	repo := copyRepo(t)
	sh(t, repo, nil, "git", "init", "-q")
	sh(t, repo, nil, "git", "add", "-A")
	const docAddr = "http://127.0.0.1:8091"
	base, checks := "", 0
	for _, line := range lines {
		if rest, ok := strings.CutPrefix(line, "go run ./conformance/zoo/zoo-storelink "); ok {
			base = startZooCmd(t, repo, strings.ReplaceAll(rest, "127.0.0.1:8091", "127.0.0.1:0"))
			continue
		}
		if base == "" {
			t.Fatalf("%q comes before the member is started", line)
		}
		want := 0
		if strings.Contains(line, "storelink-contract check") {
			if checks++; checks == 1 {
				want = 1 // the member differs from the contract
			}
		}
		out, code := bash(t, repo, strings.ReplaceAll(line, docAddr, base))
		if code != want {
			t.Fatalf("%q: exit %d, want %d\n%s", line, code, want, out)
		}
		switch {
		case strings.Contains(line, "suggest"):
			patch, err := os.ReadFile(filepath.Join(repo, "contract.patch"))
			if err != nil || !strings.Contains(string(patch), "x-go-name: QuantityUnits") || !strings.Contains(out, "2 changes proposed, 1 cause left as notes") {
				t.Errorf("suggest: %v\n%s\n%s", err, out, patch)
			}
		case checks == 2 && strings.Contains(line, "storelink-contract check"):
			if !strings.Contains(out, "Result: StoreLink conforms to the contract.") || !strings.Contains(out, "Orders left at StoreLink (1)") {
				t.Errorf("the check after the patch:\n%s", out)
			}
		case strings.Contains(line, "doctor"):
			if !strings.Contains(out, "ok    key of store 47: read store 47") || !strings.Contains(out, "ok    key of store 102: read store 102") {
				t.Errorf("doctor:\n%s", out)
			}
		}
	}
}

// startZooCmd builds and starts the zoo's command and returns the base URL it
// prints; it is killed by PID at the test's end.
func startZooCmd(t *testing.T, dir, args string) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "zoo-storelink")
	sh(t, dir, nil, "go", "build", "-o", bin, "./conformance/zoo/zoo-storelink")
	cmd := exec.Command(bin, strings.Fields(args)...)
	cmd.Dir = dir
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	line, err := bufio.NewReader(stdout).ReadString('\n')
	url, ok := strings.CutPrefix(strings.TrimSpace(line), "listening on ")
	if err != nil || !ok {
		t.Fatalf("the member did not say where it listens: %q %v", line, err)
	}
	return url
}

// bash runs one command line in dir, bounded in time, returning output and exit code.
func bash(t *testing.T, dir, line string) (string, int) {
	t.Helper()
	var out bytes.Buffer
	code := runIn(t, dir, nil, &out, &out, "bash", "-c", line)
	return out.String(), code
}
