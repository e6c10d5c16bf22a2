package gcdefault

import (
	"math"
	"runtime/debug"
	"testing"
)

// current reads the GC percent and memory limit without changing them.
func current() (percent int, limit int64) {
	percent = debug.SetGCPercent(100)
	debug.SetGCPercent(percent)
	return percent, debug.SetMemoryLimit(-1)
}

// restore puts back the settings the test started with.
func restore(t *testing.T) {
	percent, limit := current()
	t.Cleanup(func() {
		debug.SetGCPercent(percent)
		debug.SetMemoryLimit(limit)
	})
}

func TestApplySetsTheDefaultsWhenTheEnvironmentSetsNone(t *testing.T) {
	restore(t)
	debug.SetGCPercent(100)
	debug.SetMemoryLimit(math.MaxInt64)
	got := Apply(func(string) string { return "" })
	if got != (Applied{Percent: Percent, MemoryLimit: MemoryLimit}) {
		t.Errorf("Apply reported %+v", got)
	}
	if p, l := current(); p != Percent || l != MemoryLimit {
		t.Errorf("after Apply: GC percent %d, memory limit %d; want %d, %d", p, l, Percent, MemoryLimit)
	}
}

func TestTheOperatorsGOGCAndGOMEMLIMITWin(t *testing.T) {
	for _, tc := range []struct {
		name        string
		env         map[string]string
		wantPercent int
		wantLimit   int64
	}{
		{"GOGC set", map[string]string{"GOGC": "150"}, 150, MemoryLimit},
		{"GOGC off", map[string]string{"GOGC": "off"}, -1, MemoryLimit},
		{"GOMEMLIMIT set", map[string]string{"GOMEMLIMIT": "1GiB"}, Percent, 1 << 30},
		{"both set", map[string]string{"GOGC": "150", "GOMEMLIMIT": "1GiB"}, 150, 1 << 30},
	} {
		t.Run(tc.name, func(t *testing.T) {
			restore(t)
			// What the runtime set at start-up from the same environment.
			debug.SetGCPercent(tc.wantPercent)
			debug.SetMemoryLimit(math.MaxInt64)
			if _, ok := tc.env["GOMEMLIMIT"]; ok {
				debug.SetMemoryLimit(tc.wantLimit)
			}
			Apply(func(k string) string { return tc.env[k] })
			if p, l := current(); p != tc.wantPercent || l != tc.wantLimit {
				t.Errorf("after Apply: GC percent %d, memory limit %d; want %d, %d", p, l, tc.wantPercent, tc.wantLimit)
			}
		})
	}
}
