package main

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	junit "github.com/joshdk/go-junit"
	"github.com/korral/storelink/mockstorelink"
)

// docBlock is one sh block of docs/contract-checker.md and the section
// it is in.
type docBlock struct{ section, text string }

// docBlocks returns every sh block of the document, indented ones (in a
// list) included, dedented.
func docBlocks(t *testing.T) []docBlock {
	t.Helper()
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "contract-checker.md"))
	if err != nil {
		t.Fatal(err)
	}
	var out []docBlock
	section := ""
	fence := regexp.MustCompile("(?ms)^( *)```sh\n(.*?)^ *```\n")
	heading := regexp.MustCompile(`(?m)^#{2,3} (.*)$`)
	text := string(doc)
	idx := fence.FindAllStringSubmatchIndex(text, -1)
	for _, m := range idx {
		for _, h := range heading.FindAllStringSubmatchIndex(text[:m[0]], -1) {
			section = text[h[2]:h[3]]
		}
		indent := text[m[2]:m[3]]
		var lines []string
		for _, l := range strings.Split(strings.TrimRight(text[m[4]:m[5]], "\n"), "\n") {
			lines = append(lines, strings.TrimPrefix(l, indent))
		}
		out = append(out, docBlock{section, strings.Join(lines, "\n")})
	}
	return out
}

// firstHourSection is the section whose commands patch, regenerate and
// build the repository: e2e/first_hour_test.go runs them in a copy.
const firstHourSection = "Meeting your StoreLink: the first hour"

// fileFlags are the flags whose value is a file the commands of the
// document read or write; the test puts them in a temporary directory.
var fileFlags = map[string]bool{"--keyring-file": true, "--replay-out": true, "--findings": true, "-o": true,
	"--out": true, "--spec": true, "-keyring-out": true}

// foreignSections are the sections whose commands run against the foreign
// double, where a check drifts (exit 1) on purpose.
var foreignSections = map[string]bool{"Meeting a StoreLink that differs": true, "From findings to a spec change: suggest": true}

// startForeignCmd starts the foreign double's command and returns its base
// URL; it stops when the test ends.
func startForeignCmd(t *testing.T, args []string) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "foreign-storelink")
	build := exec.Command("go", "build", "-o", bin, "./conformance/foreignstorelink/foreign-storelink")
	build.Dir = filepath.Join("..", "..")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build the foreign double: %v\n%s", err, out)
	}
	cmd := exec.Command(bin, args...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	line, err := bufio.NewReader(stdout).ReadString('\n')
	url, ok := strings.CutPrefix(strings.TrimSpace(line), "listening on ")
	if err != nil || !ok {
		t.Fatalf("the foreign double did not say where it listens: %q %v", line, err)
	}
	return url
}

// TestDocCommands runs every command of docs/contract-checker.md against
// fresh mocks, free ports and temporary files; an unknown command fails.
func TestDocCommands(t *testing.T) {
	blocks := docBlocks(t)
	if len(blocks) < 6 {
		t.Fatalf("the document has %d sh blocks; the test expects the check, no-assumptions, generate, replay, proxy and pipeline examples", len(blocks))
	}
	mock, keyring := startMock(t)
	keys, err := os.ReadFile(keyring)
	if err != nil {
		t.Fatal(err)
	}
	d := &docRun{t: t, mock: mock, keys: keys, dir: t.TempDir(), ran: map[string]bool{},
		env: map[string]string{"STORELINK_URL": mock.URL, "STORELINK_KEYRING_FILE": "storelink-keyring.json"}}
	for _, b := range blocks {
		if b.section == firstHourSection {
			continue // e2e/first_hour_test.go runs it, in a copy of the repository
		}
		for _, l := range strings.Split(strings.ReplaceAll(b.text, "\\\n", " "), "\n") {
			d.runLine(docBlock{b.section, l})
		}
	}
	for _, want := range []string{"build", "check", "replay", "proxy", "suggest", "foreign"} {
		if !d.ran[want] {
			t.Errorf("the document shows no %s command the test ran", want)
		}
	}
}

// docRun runs the document's commands one line at a time against one mock.
type docRun struct {
	t          *testing.T
	mock       *mockstorelink.Running
	keys       []byte // the mock's keyring, as JSON
	dir        string // where the commands' files go
	env        map[string]string
	foreignURL string // the foreign double, once a line started it
	ran        map[string]bool
}

// file is where a file the document names is written.
func (d *docRun) file(name string) string {
	name = strings.TrimPrefix(name, "~/")
	if filepath.IsAbs(name) {
		name = filepath.Base(name)
	}
	return filepath.Join(d.dir, name)
}

// runLine runs one line of a block.
func (d *docRun) runLine(b docBlock) {
	t := d.t
	line := os.Expand(b.text, func(v string) string {
		if s, ok := d.env[v]; ok {
			return s
		}
		t.Fatalf("%s: the command uses $%s, which the test does not set", b.section, v)
		return ""
	})
	args := strings.Fields(strings.ReplaceAll(line, `"`, ""))
	redirect := ""
	if n := len(args); n >= 2 && args[n-2] == ">" {
		redirect, args = d.file(args[n-1]), args[:n-2]
	}
	switch {
	case len(args) >= 3 && args[0] == "go" && args[1] == "run" && args[2] == "./cmd/storelink-contract":
		args = args[3:]
	case len(args) >= 1 && args[0] == builtBinary:
		// The binary the document built; bare "storelink-contract" is not on
		// a reader's PATH, so it is an unknown command here.
		if !d.ran["build"] {
			t.Fatalf("%s: %q runs %s before the document builds it", b.section, line, builtBinary)
		}
		args = args[1:]
	case len(args) >= 3 && args[0] == "go" && args[1] == "run" && args[2] == "./conformance/foreignstorelink/foreign-storelink":
		d.startForeign(args[3:])
		return
	case len(args) >= 2 && args[0] == "go" && args[1] == "build":
		d.build(b, line, args)
		return
	default:
		t.Fatalf("%s: the test does not know how to run %q", b.section, line)
	}
	d.substitute(b, line, args)
	d.ran[args[0]] = true
	if args[0] == "proxy" {
		d.proxy(b, line, args)
		return
	}
	d.command(b, line, args, redirect)
}

// startForeign starts the foreign double on a free port, its files in dir.
func (d *docRun) startForeign(args []string) {
	for i := range args {
		switch {
		case i > 0 && args[i-1] == "-addr":
			args[i] = "127.0.0.1:0"
		case i > 0 && fileFlags[args[i-1]]:
			args[i] = d.file(args[i])
		}
	}
	d.foreignURL = startForeignCmd(d.t, args)
	d.ran["foreign"] = true
}

// builtBinary is the checker as the document builds it and runs it, from
// the repository's root.
const builtBinary = "bin/storelink-contract"

// build runs a go build line from the repository's root, its output in dir.
// Only a build of the checker to builtBinary counts as building it.
func (d *docRun) build(b docBlock, line string, args []string) {
	checker := slices.Contains(args, "./cmd/storelink-contract")
	for i := range args {
		if i > 0 && args[i-1] == "-o" {
			checker = checker && args[i] == builtBinary
			args[i] = d.file(args[i])
		}
	}
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Dir = filepath.Join("..", "..")
	if out, err := cmd.CombinedOutput(); err != nil {
		d.t.Fatalf("%s: %q: %v\n%s", b.section, line, err, out)
	}
	if checker {
		d.ran["build"] = true
	}
}

// substitute replaces the addresses and files of a command's flags with
// the test's, writing the mock's keyring where a keyring file is named.
func (d *docRun) substitute(b docBlock, line string, args []string) {
	for i := 1; i < len(args); i++ {
		switch prev := args[i-1]; {
		case (prev == "--base-url" || prev == "--upstream") && foreignSections[b.section]:
			if d.foreignURL == "" {
				d.t.Fatalf("%s: %q needs the foreign double started first", b.section, line)
			}
			args[i] = d.foreignURL
		case prev == "--base-url" || prev == "--upstream":
			args[i] = d.mock.URL
		case prev == "--keyring-file" && foreignSections[b.section]:
			args[i] = d.file(args[i]) // written by the double's -keyring-out
		case prev == "--listen":
			args[i] = "127.0.0.1:0"
		case fileFlags[prev]:
			args[i] = d.file(args[i])
			if prev == "--keyring-file" {
				if err := os.WriteFile(args[i], d.keys, 0o600); err != nil {
					d.t.Fatal(err)
				}
			}
		case (args[0] == "replay" || args[0] == "suggest") && i == 1:
			args[i] = d.file(args[i])
		}
	}
}

// proxy starts the proxy command, drives the mock through it, and checks
// its exit and its findings file.
func (d *docRun) proxy(b docBlock, line string, args []string) {
	t := d.t
	p := startProxyCmd(t, args[1:]...)
	driveMock(t, "http://"+p.addr, d.mock.Server.DefaultKeyring()["47"])
	if code := p.exit(); code != exitConforms {
		t.Fatalf("%s: %q: exit %d\n%s", b.section, line, code, p.stderr)
	}
	for i := range args {
		if args[i] == "--findings" {
			if _, sum := readFindings(t, args[i+1]); sum == nil {
				t.Fatalf("%s: %q wrote no summary to the documented file", b.section, line)
			}
		}
	}
}

// command runs any other command and checks its exit and the files it
// writes.
func (d *docRun) command(b docBlock, line string, args []string, redirect string) {
	t := d.t
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), args, &stdout, &stderr)
	want := exitConforms
	if foreignSections[b.section] && args[0] == "check" {
		want = exitDrift // the double departs from the contract on purpose
	}
	if code != want {
		t.Fatalf("%s: %q: exit %d\n%s\n%s", b.section, line, code, stdout.String(), stderr.String())
	}
	if redirect != "" {
		if err := os.WriteFile(redirect, stdout.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		if strings.HasSuffix(redirect, ".xml") {
			if _, err := junit.IngestFile(redirect); err != nil {
				t.Errorf("%s: %s is not JUnit XML: %v", b.section, redirect, err)
			}
		}
	}
	for i := range args {
		if args[i] == "--replay-out" {
			if _, err := os.Stat(args[i+1]); err != nil {
				t.Errorf("%s: %q wrote no replay file: %v", b.section, line, err)
			}
		}
	}
}

// TestDocPortsAreFree: the loopback ports the walk-through's commands use
// are used by no other document's example, so a reader who runs the
// console or the server as the README shows can follow it unchanged.
func TestDocPortsAreFree(t *testing.T) {
	port := regexp.MustCompile(`(?:127\.0\.0\.1|localhost|0\.0\.0\.0):([0-9]+)`)
	ours := map[string]bool{}
	for _, b := range docBlocks(t) {
		for _, m := range port.FindAllStringSubmatch(b.text, -1) {
			ours[m[1]] = true
		}
	}
	if len(ours) < 3 {
		t.Fatalf("the walk-through uses %d loopback ports; the test expects the double's, the proxy's and more", len(ours))
	}
	root := filepath.Join("..", "..")
	others, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range append(others, filepath.Join(root, "README.md")) {
		if filepath.Base(f) == "contract-checker.md" {
			continue
		}
		text, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range port.FindAllStringSubmatch(string(text), -1) {
			if ours[m[1]] {
				t.Errorf("%s uses port %s, which docs/contract-checker.md's commands also use", filepath.Base(f), m[1])
			}
		}
	}
}
