// Command profiledmcp is storelink-mcp (cli.Run) that writes CPU and heap
// profiles on exit, for the load driver.
//
//	go build -o /tmp/profiledmcp ./bench/profiledmcp
//	bin/loadgen --server /tmp/profiledmcp --server-env PROFILE_DIR=/tmp/prof ...
//	go tool pprof -top /tmp/profiledmcp /tmp/prof/cpu-PID.pprof
//	kill -USR1 PID   # a heap profile of the running server
//
// On exit it also writes rss-PID.txt, the peak resident set size in KiB.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"syscall"

	"github.com/korral/storelink/internal/demostorelink"
	"github.com/korral/storelink/internal/gcdefault"
	"github.com/korral/storelink/mcpserver/cli"
)

func main() {
	dir := os.Getenv("PROFILE_DIR")
	if dir == "" {
		fmt.Fprintln(os.Stderr, "profiledmcp: set PROFILE_DIR to the directory for the profiles")
		os.Exit(2)
	}
	// As storelink-mcp does (ADR 0045).
	gcdefault.Apply(os.Getenv)
	stop, err := startProfiles(dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, "profiledmcp:", err)
		os.Exit(1)
	}
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err = cli.Run(ctx, os.Args[1:], cli.Env{
		Getenv: os.Getenv, ReadFile: os.ReadFile,
		Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr,
		Embedded: demostorelink.Start, // exactly as storelink-mcp does
	})
	cancel()
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "profiledmcp:", err)
		os.Exit(1)
	}
}

// startProfiles starts the CPU profile; the returned function ends it and
// writes the heap profile. SIGUSR1 writes a heap profile at once.
func startProfiles(dir string) (func(), error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	pid := os.Getpid()
	usr1 := make(chan os.Signal, 1)
	signal.Notify(usr1, syscall.SIGUSR1)
	go func() {
		for n := 1; ; n++ {
			<-usr1
			writeHeap(filepath.Join(dir, fmt.Sprintf("heap-%d-usr1-%d.pprof", pid, n)))
		}
	}()
	f, err := os.Create(filepath.Join(dir, fmt.Sprintf("cpu-%d.pprof", pid)))
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
		writeHeap(filepath.Join(dir, fmt.Sprintf("heap-%d.pprof", pid)))
		writeRSS(filepath.Join(dir, fmt.Sprintf("rss-%d.txt", pid)))
	}, nil
}

// writeHeap writes the live heap after a collection, so it shows what is
// retained rather than garbage not yet collected.
func writeHeap(path string) {
	runtime.GC()
	if h, err := os.Create(path); err == nil {
		_ = pprof.WriteHeapProfile(h)
		h.Close()
	}
}

// writeRSS writes the process's peak resident set size in KiB (getrusage's
// ru_maxrss), to compare the memory a GC setting costs.
func writeRSS(path string) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err == nil {
		_ = os.WriteFile(path, fmt.Appendf(nil, "%d\n", ru.Maxrss), 0o644)
	}
}
