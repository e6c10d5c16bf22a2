package tools

// callStack is the goroutine stack a tool call is given up front, in
// bytes: about what a call's deepest path (a log line through slog's
// handler, the audit insert through SQLite's virtual machine) uses.
const callStack = 64 << 10

// growStack grows the calling goroutine's stack to at least callStack in
// one step. The SDK serves every request on a fresh goroutine with a small
// stack, and a call then grows it by doubling, copying the whole stack at
// each step, deep inside slog or SQLite: that copying was about a tenth of
// a trivial call's CPU (docs/benchmarks.md). Grown here, at the start of
// the call, the stack is copied once, while it is still shallow.
//
// The frame's size is what grows the stack (the function's entry checks
// that the frame fits); pad is touched only when stackTouch is set, which
// it never is, so the 60 KiB are neither zeroed nor written on any call.
//
//go:noinline
func growStack() {
	if stackTouch {
		var pad [callStack - 4<<10]byte
		touch(pad[:])
	}
}

// stackTouch is never set; the compiler cannot know that, so growStack
// keeps its frame.
var stackTouch bool

// touch keeps pad (and so growStack's frame) from being optimised away.
//
//go:noinline
func touch(b []byte) {
	if len(b) > 0 {
		b[len(b)-1] = 1
	}
}
