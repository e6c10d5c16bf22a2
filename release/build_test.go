package release_test

// The production build (ADR 0015): built with the nodemo tag, without the
// embedded demo StoreLink and its libraries. Needs no dist/.

import (
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/korral/storelink/internal/e2etest"
)

// releaseTags is the build tag of the Makefile's RELEASE_TAGS.
const releaseTags = "nodemo"

// demoOnlyModules are linked only for the embedded demo StoreLink.
var demoOnlyModules = []string{
	"github.com/korral/storelink/mockstorelink",
	"github.com/getkin/kin-openapi",
	"github.com/santhosh-tekuri/jsonschema",
}

// buildRelease builds storelink-mcp as released, with symbols for `go tool nm`.
func buildRelease(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "storelink-mcp")
	cmd := exec.Command("go", "build", "-trimpath", "-buildvcs=false", "-tags", releaseTags, "-o", bin, "./cmd/storelink-mcp")
	cmd.Dir = e2etest.Root(t)
	cmd.Env = append(os.Environ(), "GOWORK=off", "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build -tags %s: %v\n%s", releaseTags, err, out)
	}
	return bin
}

// demoLinks names the demo-only modules `go version -m` lists in bin.
func demoLinks(t *testing.T, bin string) (info string, linked []string) {
	t.Helper()
	out, err := exec.Command("go", "version", "-m", bin).Output()
	if err != nil {
		t.Fatalf("go version -m: %v", err)
	}
	info = string(out)
	for _, line := range strings.Split(info, "\n") {
		f := strings.Fields(line)
		if len(f) < 2 || (f[0] != "dep" && f[0] != "=>") {
			continue
		}
		for _, m := range demoOnlyModules {
			if strings.HasPrefix(f[1], m) {
				linked = append(linked, f[1])
			}
		}
	}
	return info, linked
}

func TestDistProductionBuildLinksNoDemo(t *testing.T) {
	// The default build must link them, or the check below proves nothing.
	if _, linked := demoLinks(t, e2etest.Binary(t)); len(linked) == 0 {
		t.Fatalf("the default build links none of %q: the check of the release build cannot tell it apart", demoOnlyModules)
	}
	bin := buildRelease(t)
	info, linked := demoLinks(t, bin)
	if len(linked) > 0 {
		t.Errorf("the release build links %q, which only the embedded demo needs:\n%s", linked, info)
	}
	if !strings.Contains(info, "\tbuild\t-tags="+releaseTags+"\n") {
		t.Errorf("build info lacks -tags=%s:\n%s", releaseTags, info)
	}
	nm, err := exec.Command("go", "tool", "nm", bin).Output()
	if err != nil {
		t.Fatalf("go tool nm: %v", err)
	}
	for _, m := range demoOnlyModules {
		if strings.Contains(string(nm), m+".") || strings.Contains(string(nm), m+"/") {
			t.Errorf("the release build's symbols include %s", m)
		}
	}
}

// TestDistProductionBuildRefusesDemo: without UPSTREAM_BASE_URL the
// production build exits 2 naming the setting; with it, it serves tools/list.
func TestDistProductionBuildRefusesDemo(t *testing.T) {
	bin := buildRelease(t)
	w := e2etest.NewWorld(t)
	base := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + w.Dir, "STATE_DB_PATH=" + w.StatePath}
	for _, args := range [][]string{nil, {"serve", "--http", "127.0.0.1:0"}} {
		stdout, stderr, exit := e2etest.RunProgram(t, bin, base, args...)
		lines := strings.Split(strings.TrimRight(stderr, "\n"), "\n")
		if exit != 2 || stdout != "" || len(lines) != 1 ||
			!strings.Contains(lines[0], "UPSTREAM_BASE_URL is not set") || !strings.Contains(lines[0], "set UPSTREAM_BASE_URL") {
			t.Errorf("%q without UPSTREAM_BASE_URL: exit %d, stdout %q, stderr %q; want exit 2 and one line naming UPSTREAM_BASE_URL", args, exit, stdout, stderr)
		}
	}
	if _, err := os.Stat(w.StatePath); err == nil {
		t.Error("a refused start created the state database")
	}

	cmd := exec.Command(bin)
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH")}, w.Env()...)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr e2etest.SyncBuffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		_ = stdin.Close()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "release-check", Version: "1"}, nil).
		Connect(ctx, &mcp.IOTransport{Reader: io.NopCloser(stdout), Writer: stdin}, nil)
	if err != nil {
		t.Fatalf("connect: %v\nstderr:\n%s", err, stderr.String())
	}
	defer cs.Close()
	list, err := cs.ListTools(ctx, nil)
	if err != nil || len(list.Tools) == 0 {
		t.Fatalf("tools/list = %v, %v\nstderr:\n%s", list, err, stderr.String())
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "korral_list_authorized_stores"})
	if err != nil || res.IsError {
		t.Fatalf("korral_list_authorized_stores = %+v, %v\nstderr:\n%s", res, err, stderr.String())
	}
}
