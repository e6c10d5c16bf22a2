package e2e_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/korral/storelink/internal/e2etest"
)

// TestReadmeCommands runs every sh command of e2e/README.md from the
// repository root, each a `go test -run` of this suite; other blocks are refused.
func TestReadmeCommands(t *testing.T) {
	doc, err := os.ReadFile(e2etest.Path(t, "e2e/README.md"))
	if err != nil {
		t.Fatal(err)
	}
	var commands []string
	for _, m := range regexp.MustCompile("(?ms)^```([a-z]*)\n(.*?)^```\n").FindAllStringSubmatch(string(doc), -1) {
		if m[1] != "sh" {
			t.Errorf("a %q block: commands go in sh blocks, which this test runs", m[1])
			continue
		}
		for _, line := range strings.Split(m[2], "\n") {
			if line = strings.TrimSpace(line); line != "" && !strings.HasPrefix(line, "#") {
				commands = append(commands, line)
			}
		}
	}
	if len(commands) == 0 {
		t.Fatal("e2e/README.md shows no command in an sh block")
	}
	for _, c := range commands {
		if !strings.HasPrefix(c, "go test ") || !strings.Contains(c, " -run ") || !strings.HasSuffix(c, " ./e2e") || strings.Contains(c, "TestReadme") {
			t.Errorf("%q: the README's commands run chosen tests of this suite (go test ... -run Test... ./e2e), never this one", c)
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
		cmd := exec.CommandContext(ctx, "bash", "-euo", "pipefail", "-c", c)
		cmd.Dir, cmd.Env = e2etest.Root(t), os.Environ()
		out, err := cmd.CombinedOutput()
		cancel()
		if err != nil {
			t.Fatalf("%s: %v\n%s", c, err, out)
		}
		if !strings.Contains(string(out), "ok  \tgithub.com/korral/storelink/e2e\t") || strings.Contains(string(out), "[no tests to run]") {
			t.Errorf("%s ran no test:\n%s", c, out)
		}
	}
}

// readmeBlock returns the lines of the README's indented code block that
// starts with first, dedented.
func readmeBlock(t *testing.T, first string) []string {
	t.Helper()
	doc, err := os.ReadFile(e2etest.Path(t, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(doc), "\n\n    "+first+"\n")
	if !ok {
		t.Fatalf("the README shows no indented block starting with %q", first)
	}
	lines := []string{first}
	for _, l := range strings.Split(rest, "\n") {
		if !strings.HasPrefix(l, "    ") {
			break
		}
		lines = append(lines, strings.TrimPrefix(l, "    "))
	}
	return lines
}

// TestReadmeClientInstallFromAFreshFolder runs the README's install lines
// for the client module, as printed, in a fresh folder beside a checkout
// (a link to this repository), outside the workspace and offline: the
// module builds and its program runs.
func TestReadmeClientInstallFromAFreshFolder(t *testing.T) {
	lines := readmeBlock(t, "go mod init example.com/replenish-bot")
	if len(lines) < 3 {
		t.Fatalf("the install block has %d lines: %q", len(lines), lines)
	}
	base := t.TempDir()
	if err := os.Symlink(e2etest.Root(t), filepath.Join(base, "storelink")); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(base, "replenish-bot")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	// "once your code imports the client"
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(clientProgram), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("go", "env", "GOMODCACHE").Output()
	if err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod",
		// Offline: only what the module cache holds.
		"GOPROXY=file://"+filepath.Join(strings.TrimSpace(string(out)), "cache", "download"), "GOSUMDB=off")
	for _, line := range lines {
		cmd := exec.Command("bash", "-euo", "pipefail", "-c", line)
		cmd.Dir, cmd.Env = dir, env
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s: %v\n%s", line, err, out)
		}
	}
	run := exec.Command("go", "run", ".")
	run.Dir, run.Env = dir, env
	if out, err := run.CombinedOutput(); err != nil || !strings.Contains(string(out), "client ready") {
		t.Fatalf("the program did not run: %v\n%s", err, out)
	}
}

// clientProgram is a service's first use of the client.
const clientProgram = `package main

import (
	"fmt"

	"github.com/korral/storelink/storelinkclient"
)

func main() {
	_, err := storelinkclient.NewClientWithResponses("http://127.0.0.1:1",
		storelinkclient.WithResponseLimit(storelinkclient.DefaultResponseLimit))
	if err != nil {
		panic(err)
	}
	fmt.Println("client ready")
}
`
