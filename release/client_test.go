package release_test

// The client module as other teams use it: from the local path, and
// released with make release-client then fetched over git.

import (
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/korral/storelink/internal/e2etest"
	"github.com/korral/storelink/mockstorelink"
)

// consumerMain is the README's sample program, whole.
const consumerMain = `package main

import (
	"context"
	"fmt"
	"os"

	"github.com/korral/storelink/storelinkclient"
)

func main() {
	baseURL, key := os.Args[1], os.Args[2]
	c, err := storelinkclient.NewClientWithResponses(baseURL,
		storelinkclient.WithResponseLimit(storelinkclient.DefaultResponseLimit))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	resp, err := c.GetInventoryWithResponse(context.Background(), "47",
		&storelinkclient.GetInventoryParams{SKU: "8847291"}, storelinkclient.WithStoreKey(key))
	inv, err := storelinkclient.Result(resp, err)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println(inv.OnHandUnits)
}
`

// newConsumer writes a module outside the workspace that imports the client, with extra go.mod lines.
func newConsumer(t *testing.T, goModExtra string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "consumer")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	gomod := "module example.com/consumer\n\ngo 1.26.0\n" + goModExtra
	for name, body := range map[string]string{"go.mod": gomod, "main.go": consumerMain} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// goIn runs the go command in dir outside any workspace.
func goIn(t *testing.T, dir string, env []string, args ...string) string {
	t.Helper()
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), append([]string{"GOWORK=off", "GOFLAGS=-mod=mod"}, env...)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// runConsumer runs the consumer against a fresh mock and checks its output after exactly one request.
func runConsumer(t *testing.T, dir string, env []string) {
	t.Helper()
	r, err := mockstorelink.Start(mockstorelink.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.Close() })
	key := r.Server.DefaultKeyring()["47"]
	got := strings.TrimSpace(goIn(t, dir, env, "run", ".", r.URL, key))
	inventory := func(rec mockstorelink.RequestRecord) bool {
		return strings.HasPrefix(rec.Path, "/v1/stores/47/inventory")
	}
	if n := r.Server.RequestCount(inventory); n != 1 {
		t.Fatalf("the mock saw %d inventory requests, want 1", n)
	}
	req, _ := http.NewRequest(http.MethodGet, r.URL+"/v1/stores/47/inventory?sku=8847291", nil)
	req.Header.Set("X-Korral-Store-Key", key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var want struct {
		OnHandUnits json.Number `json:"on_hand_units"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&want); err != nil {
		t.Fatal(err)
	}
	if got != want.OnHandUnits.String() {
		t.Errorf("consumer printed %q, the mock holds %s on hand", got, want.OnHandUnits)
	}
}

// TestClientModuleConsumer builds a module outside the workspace against the
// local client, catching a missing require or a dependency on our other modules.
func TestClientModuleConsumer(t *testing.T) {
	root := e2etest.Root(t)
	dir := newConsumer(t, "\nrequire github.com/korral/storelink/storelinkclient v0.0.0\n\nreplace github.com/korral/storelink/storelinkclient => "+filepath.Join(root, "storelinkclient")+"\n")
	goIn(t, dir, nil, "mod", "tidy")
	runConsumer(t, dir, nil)
}

// TestDistClientReleaseAndFetch checks which releases `make release-client`
// tags or refuses, then fetches the first over git with the README's
// commands and runs it against the mock.
func TestDistClientReleaseAndFetch(t *testing.T) {
	distStamp(t)
	src := copySource(t)
	releaseClient(t, src)
	dir, env := fetchClientRelease(t, src)
	runConsumer(t, dir, env)
}

// releaseClient runs `make release-client` through versions and changes, checking each is tagged or refused.
func releaseClient(t *testing.T, src string) {
	t.Helper()
	extra := filepath.Join(src, "storelinkclient", "extra.go")
	for _, step := range []struct {
		name, change, version string // change "-" removes extra.go
		ok                    bool
		out                   string
	}{
		{"first release", "", "v0.1.0", true, "skipped, no earlier storelinkclient/v* tag"},
		{"the same tag again", "", "v0.1.0", false, "already exists"},
		{"patch release adding API", "package storelinkclient\n\n// Extra is new API.\nconst Extra = 1\n", "v0.1.1", false, "additions need a new minor version"},
		{"minor release adding API", "", "v0.2.0", true, "Compatible changes"},
		{"patch release removing API", "-", "v0.2.1", false, "breaks the API of v0.2.0"},
		{"bad version", "", "banana", false, "not a semantic version"},
	} {
		if step.change != "" {
			var err error
			if step.change == "-" {
				err = os.Remove(extra)
			} else {
				err = os.WriteFile(extra, []byte(step.change), 0o644)
			}
			if err != nil {
				t.Fatal(err)
			}
			runIn(t, src, "git", "add", "-A")
			runIn(t, src, "git", "commit", "-q", "-m", "change the client")
		}
		cmd := exec.Command("make", "-s", "release-client", "VERSION="+step.version)
		cmd.Dir = src
		out, err := cmd.CombinedOutput()
		if (err == nil) != step.ok || !strings.Contains(string(out), step.out) {
			t.Fatalf("%s: ok=%v\n%s", step.name, err == nil, out)
		}
	}
}

// runIn runs a command in dir and fails the test if it fails.
func runIn(t *testing.T, dir, name string, args ...string) {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s %v: %v\n%s", name, args, err, out)
	}
}

// fetchClientRelease fetches the first release over git with the README's
// commands (GOPRIVATE, and an insteadOf rule mapping this repository to the
// copy). It returns the module's directory and environment.
func fetchClientRelease(t *testing.T, src string) (string, []string) {
	t.Helper()
	home := t.TempDir()
	cacheOut, err := exec.Command("go", "env", "GOMODCACHE", "GOPROXY", "GOCACHE").Output()
	if err != nil {
		t.Fatal(err)
	}
	f := strings.Fields(string(cacheOut))
	env := []string{
		// The build cache would follow HOME; keep the real one.
		"HOME=" + home, "GOCACHE=" + f[2], "GIT_CONFIG_NOSYSTEM=1", "GOENV=" + filepath.Join(home, "goenv"),
		// git config --global writes here, never to the caller's file.
		"GIT_CONFIG_GLOBAL=" + filepath.Join(home, ".gitconfig"),
		// Its own module cache, so the copy's tag never reaches the real one.
		"GOMODCACHE=" + filepath.Join(home, "mod"), "GOFLAGS=-mod=mod -modcacherw",
		"GOPROXY=file://" + filepath.Join(f[0], "cache", "download") + "," + f[1],
	}
	readme, err := os.ReadFile(e2etest.Path(t, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	dir := newConsumer(t, "")
	for _, line := range []string{
		`go env -w GOPRIVATE=github.com/korral/*`,
		`git config --global url."ssh://git@github.com/korral/".insteadOf "https://github.com/korral/"`,
		`git config --global url."file://` + src + `".insteadOf "https://github.com/korral/storelink"`,
		`go get github.com/korral/storelink/storelinkclient@v0.1.0`,
	} {
		if !strings.Contains(line, src) && !bytes.Contains(readme, []byte("    "+line+"\n")) {
			t.Errorf("the README no longer shows %q", line)
		}
		cmd := exec.Command("bash", "-c", line)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), append([]string{"GOWORK=off"}, env...)...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s: %v\n%s", line, err, out)
		}
		if strings.HasPrefix(line, "go get") && !strings.Contains(string(out), "github.com/korral/storelink/storelinkclient v0.1.0") {
			t.Errorf("go get did not report the tagged version:\n%s", out)
		}
	}
	return dir, env
}
