package e2e_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/korral/storelink/internal/e2etest"
)

// Processes that open one state file that does not exist yet, at once: two
// servers (replicas of a stdio deployment, say) and six runs of an
// operator's migrate. The first to open the file turns it to WAL mode, and
// SQLite can refuse the others at once with SQLITE_BUSY while it does; Open
// tries the migration again (ADR 0008). Every process starts, every call is
// answered, and the audit trail holds each call once.

// openRaceRounds is how many fresh state files the test opens. The
// collision it guards against needs the processes' opens to overlap, which
// a round seldom achieves: with Open's retry taken out, 4 of 24 runs of
// the test failed here (more processes a round made it no likelier).
// state/sqlite's TestRetryBusy and TestIsBusy catch that every time; this
// is the check with real processes.
const openRaceRounds = 12

func TestProcessesOpeningOneNewStateFileAtOnceAllStart(t *testing.T) {
	if testing.Short() {
		t.Skip("starts 96 processes")
	}
	bin := e2etest.Binary(t)
	for round := range openRaceRounds {
		dir := t.TempDir()
		env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "STATE_DB_PATH=" + filepath.Join(dir, "state.db")}
		errs := startTogether(bin, env, 2, 6)
		for _, err := range errs {
			t.Errorf("round %d: %v", round+1, err)
		}
		if len(errs) > 0 {
			continue
		}
		out, stderr, code := e2etest.RunProgram(t, bin, env, "audit", "--tool", "korral_list_authorized_stores", "--format", "json")
		if code != 0 {
			t.Fatalf("round %d: audit exited %d: %s", round+1, code, stderr)
		}
		if n := strings.Count(out, `"tool":"korral_list_authorized_stores"`); n != 2 {
			t.Errorf("round %d: the trail holds %d calls of the 2 servers:\n%s", round+1, n, out)
		}
	}
}

// raceProc is one process of startTogether: a server when stdin is set.
type raceProc struct {
	cmd    *exec.Cmd
	stderr bytes.Buffer
	stdin  io.WriteCloser
	stdout io.ReadCloser
}

// startTogether starts servers stdio servers and migrates `migrate` runs of
// bin with env at once; each server answers one korral_list_authorized_stores
// call and is closed. It returns what went wrong, one error per process.
func startTogether(bin string, env []string, servers, migrates int) []error {
	procs := make([]*raceProc, servers+migrates)
	for i := range procs {
		p := &raceProc{cmd: exec.Command(bin)}
		if i < servers {
			p.stdin, _ = p.cmd.StdinPipe()
			p.stdout, _ = p.cmd.StdoutPipe()
		} else {
			p.cmd.Args = append(p.cmd.Args, "migrate")
		}
		p.cmd.Env, p.cmd.Stderr = env, &p.stderr
		procs[i] = p
	}
	// Start them all at once, from goroutines released together, so that
	// their opens of the file overlap.
	startErrs := make([]error, len(procs))
	release := make(chan struct{})
	var started sync.WaitGroup
	for i, p := range procs {
		started.Go(func() { <-release; startErrs[i] = p.cmd.Start() })
	}
	close(release)
	started.Wait()
	if err := errors.Join(startErrs...); err != nil {
		for i, p := range procs {
			if startErrs[i] == nil {
				_ = p.cmd.Process.Kill()
				_ = p.cmd.Wait()
			}
		}
		return []error{err}
	}
	errs := make([]error, len(procs))
	var wg sync.WaitGroup
	for i, p := range procs {
		wg.Go(func() {
			var err error
			if p.stdin != nil {
				err = callOnce(p.stdin, p.stdout)
				_ = p.stdin.Close()
			}
			if werr := waitBounded(p.cmd, 20*time.Second); err == nil {
				err = werr
			}
			if err != nil {
				errs[i] = fmt.Errorf("%s: %w\nits log:\n%s", strings.Join(p.cmd.Args, " "), err, &p.stderr)
			}
		})
	}
	wg.Wait()
	var failed []error
	for _, err := range errs {
		if err != nil {
			failed = append(failed, err)
		}
	}
	return failed
}

// callOnce connects the go-sdk client over a server's pipes and makes one
// call, which records an audit row.
func callOnce(stdin io.WriteCloser, stdout io.ReadCloser) error {
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "open-race", Version: "1"}, nil).
		Connect(ctx, &mcp.IOTransport{Reader: stdout, Writer: stdin}, nil)
	if err != nil {
		return fmt.Errorf("connect: %w", err)
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "korral_list_authorized_stores", Arguments: map[string]any{}})
	if err != nil {
		return err
	}
	var env struct {
		OK bool `json:"ok"`
	}
	raw, _ := json.Marshal(res.StructuredContent)
	if res.IsError || json.Unmarshal(raw, &env) != nil || !env.OK {
		return fmt.Errorf("korral_list_authorized_stores answered %s", raw)
	}
	return nil
}

// waitBounded waits for cmd to exit, killing it by PID after limit; an
// exit other than 0 is an error.
func waitBounded(cmd *exec.Cmd, limit time.Duration) error {
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		return err
	case <-time.After(limit):
		_ = cmd.Process.Kill()
		<-done
		return fmt.Errorf("still running after %s: killed", limit)
	}
}
