package main

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// procs remembers every process the driver started, so an interrupted run
// still ends each of them, by PID.
var procs struct {
	mu   sync.Mutex
	live map[int]*exec.Cmd
}

func track(cmd *exec.Cmd) {
	procs.mu.Lock()
	defer procs.mu.Unlock()
	if procs.live == nil {
		procs.live = map[int]*exec.Cmd{}
	}
	procs.live[cmd.Process.Pid] = cmd
}

func untrack(pid int) {
	procs.mu.Lock()
	defer procs.mu.Unlock()
	delete(procs.live, pid)
}

// killAll sends SIGKILL to every process still running; used on interrupt.
func killAll() {
	procs.mu.Lock()
	defer procs.mu.Unlock()
	for pid, cmd := range procs.live {
		_ = cmd.Process.Kill()
		delete(procs.live, pid)
	}
}

// child is a started process whose exit is awaited in the background.
type child struct {
	cmd  *exec.Cmd
	done chan struct{}
}

func startChild(cmd *exec.Cmd) (*child, error) {
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	track(cmd)
	c := &child{cmd: cmd, done: make(chan struct{})}
	go func() { _ = cmd.Wait(); untrack(cmd.Process.Pid); close(c.done) }()
	return c, nil
}

func (c *child) pid() int { return c.cmd.Process.Pid }

// stop asks the process to end with SIGTERM (unless it is already ending,
// e.g. after its stdin closed), waits up to grace, then kills it.
func (c *child) stop(grace time.Duration, term bool) {
	if term {
		_ = c.cmd.Process.Signal(syscall.SIGTERM)
	}
	select {
	case <-c.done:
	case <-time.After(grace):
		_ = c.cmd.Process.Kill()
		<-c.done
	}
}

// memory is what /proc/PID/status says about a process's resident memory.
type memory struct {
	RSSKB int64 `json:"rss_kb"` // VmRSS: resident now
	HWMKB int64 `json:"hwm_kb"` // VmHWM: the peak resident set so far
}

func readMemory(pid int) (memory, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return memory{}, err
	}
	defer f.Close()
	var m memory
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		fields := strings.Fields(v)
		if len(fields) == 0 {
			continue
		}
		n, err := strconv.ParseInt(fields[0], 10, 64)
		if err != nil {
			continue
		}
		switch k {
		case "VmRSS":
			m.RSSKB = n
		case "VmHWM":
			m.HWMKB = n
		}
	}
	if m.RSSKB == 0 {
		return m, errors.New("no VmRSS in /proc status")
	}
	return m, sc.Err()
}

func mb(kb int64) float64 { return float64(kb) / 1024 }

// clockTicks is USER_HZ, the unit of the CPU times in /proc/PID/stat; it is
// 100 on every Linux architecture Go supports.
const clockTicks = 100

// cpuTime is the user plus system CPU time the process has used so far.
func cpuTime(pid int) (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// The command name (field 2) may hold spaces; the fields after its
	// closing parenthesis are plain numbers. utime and stime are fields 14
	// and 15 of the line, so 12 and 13 after the state field.
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(f) < 13 {
		return 0, errors.New("short /proc stat line")
	}
	var ticks int64
	for _, v := range f[11:13] {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return 0, err
		}
		ticks += n
	}
	return time.Duration(ticks) * time.Second / clockTicks, nil
}
