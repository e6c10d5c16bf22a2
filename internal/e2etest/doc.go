// Package e2etest is the root module's test harness: the storelink-mcp
// binary built on demand ([Binary]), a mock StoreLink ([World]), the server
// over stdio ([Proc]) or HTTP ([HTTPProc]), a fake OAuth server ([Issuer])
// and [SyncBuffer]. Only tests import it.
//
// A package using [Binary] runs its tests through [Run], which removes the
// build directory at the end:
//
//	func TestMain(m *testing.M) { os.Exit(e2etest.Run(m)) }
package e2etest
