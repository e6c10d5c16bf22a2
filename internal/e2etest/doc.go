// Package e2etest is the harness of the end-to-end tests (e2e/) and of the
// tests that run the real binary beside what they check (release/, deploy/):
// the storelink-mcp binary, built once per test run and only when a test asks
// for it; a mock StoreLink on loopback with the files a server needs
// ([World]); the server over stdio with a go-sdk client ([Proc]) or over
// Streamable HTTP ([HTTPProc]); and the repository's root, so a test finds
// the repository's files from whatever package directory it runs in.
//
// A package using it runs its tests through [Run], which removes the build
// directory at the end:
//
//	func TestMain(m *testing.M) { os.Exit(e2etest.Run(m)) }
package e2etest
