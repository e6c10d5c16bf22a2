// Package bench holds the toolkit's performance measurements: the
// end-to-end Go benchmarks that need both the MCP server and the mock
// StoreLink (which only the root module may import together), and, in
// loadgen, the driver behind `make bench` that runs the real binaries and
// writes docs-ready tables. Nothing here is a pass/fail test of speed.
package bench
