// Package e2etest is the root module's one test harness, used by e2e/,
// eval/, cmd/storelink-demo, release/, deploy/ and architecture/: the
// storelink-mcp binary, built once per run and only when a test asks for it
// ([Binary]); a mock StoreLink with the files a server needs ([World]); the
// server over stdio ([Proc]) or Streamable HTTP ([HTTPProc]); a fake OAuth
// authorization server ([Issuer]); a log buffer safe for concurrent writes
// ([SyncBuffer]); and the repository's root. Only tests import it.
//
// A package using [Binary] runs its tests through [Run], which removes the
// build directory at the end:
//
//	func TestMain(m *testing.M) { os.Exit(e2etest.Run(m)) }
package e2etest
