package e2e_test

import (
	"context"
	"os"
	"os/exec"
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
