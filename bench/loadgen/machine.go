package main

import (
	"bufio"
	"os"
	"os/exec"
	"runtime"
	"strings"
)

// machine is where the figures were taken.
type machine struct {
	CPUs       int    `json:"cpus"`
	CPUModel   string `json:"cpu_model"`
	MemTotal   string `json:"mem_total"`
	Kernel     string `json:"kernel"`
	GoVersion  string `json:"go_version"`
	LoadBefore string `json:"loadavg_before"`
	LoadAfter  string `json:"loadavg_after"`
}

func describeMachine() machine {
	m := machine{CPUs: runtime.NumCPU(), LoadBefore: loadavg()}
	m.CPUModel = procField("/proc/cpuinfo", "model name")
	m.MemTotal = procField("/proc/meminfo", "MemTotal")
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		m.Kernel = strings.TrimSpace(string(b))
	}
	if out, err := exec.Command("go", "version").Output(); err == nil {
		m.GoVersion = strings.TrimPrefix(strings.TrimSpace(string(out)), "go version ")
	} else {
		m.GoVersion = runtime.Version()
	}
	return m
}

func procField(path, key string) string {
	f, err := os.Open(path)
	if err != nil {
		return "unknown"
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if ok && strings.TrimSpace(k) == key {
			return strings.TrimSpace(v)
		}
	}
	return "unknown"
}

// load1 is the 1-minute figure of a "1 5 15" load average.
func load1(avg string) string {
	if f := strings.Fields(avg); len(f) > 0 {
		return f[0]
	}
	return "unknown"
}

func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}

// machineMarkdown renders the title and the machine the figures come from.
func (r *report) machineMarkdown(p func(string, ...any)) {
	m := r.Machine
	p("# Benchmark results")
	p("")
	p("Taken %s (load driver: %.0f s). Figures are `median (min–max)` over %d runs; latency percentiles are per run, then summarised the same way.",
		r.Started.Format("2006-01-02 15:04 MST"), r.Finished.Sub(r.Started).Seconds(), len(r.Runs))
	p("")
	p("| Machine | |")
	p("|---|---|")
	p("| CPUs (nproc) | %d |", m.CPUs)
	p("| CPU model | %s |", m.CPUModel)
	p("| Memory | %s |", m.MemTotal)
	p("| Kernel | %s |", m.Kernel)
	p("| Go | %s |", m.GoVersion)
	p("| Load average (1, 5, 15 min) when `make bench` began / at the end | %s / %s |", m.LoadBefore, m.LoadAfter)
	p("")
	p("1-minute load average: %s at the start, %s at the end (2 cores: above about 1, other work shares the machine and latencies are pessimistic; the same-run ratios hold better).", load1(m.LoadBefore), load1(m.LoadAfter))
	p("")
}
