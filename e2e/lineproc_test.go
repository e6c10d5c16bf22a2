package e2e_test

import (
	"bufio"
	"encoding/json"
	"io"
	"os/exec"
	"testing"
	"time"

	"github.com/korral/storelink/internal/e2etest"
)

// lineProc is a child process the test writes to and whose stdout it reads
// line by line: the binary driven with raw frames, or a TypeScript driver.
type lineProc struct {
	t      *testing.T
	stdin  io.WriteCloser
	lines  chan string
	stderr *e2etest.SyncBuffer
}

// startLineProc starts cmd; at test end its stdin is closed, then it is killed after 10 s.
func startLineProc(t *testing.T, cmd *exec.Cmd) *lineProc {
	t.Helper()
	p := &lineProc{t: t, lines: make(chan string, 64), stderr: &e2etest.SyncBuffer{}}
	cmd.Stderr = p.stderr
	var err error
	if p.stdin, err = cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 1<<20), 16<<20)
		for sc.Scan() {
			p.lines <- sc.Text()
		}
		close(p.lines)
		_ = cmd.Wait() // only once stdout is read to its end
		close(done)
	}()
	t.Cleanup(func() {
		_ = p.stdin.Close()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	})
	return p
}

// read decodes the next line into v, failing if stdout closed or no line came within wait.
func (p *lineProc) read(v any, wait time.Duration) {
	p.t.Helper()
	select {
	case l, ok := <-p.lines:
		if !ok {
			p.t.Fatalf("stdout closed: the process stopped\nstderr:\n%s", p.stderr.String())
		}
		if err := json.Unmarshal([]byte(l), v); err != nil {
			p.t.Fatalf("stdout line %q is not JSON: %v", l, err)
		}
	case <-time.After(wait):
		p.t.Fatalf("no line in %s\nstderr:\n%s", wait, p.stderr.String())
	}
}
