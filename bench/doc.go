// Package bench holds the end-to-end Go benchmarks that need both the MCP
// server and the mock; loadgen is the driver behind `make bench`. Nothing
// here is a pass/fail test of speed.
package bench
