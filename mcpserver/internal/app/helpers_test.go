package app

import (
	"os"
	"testing"

	"github.com/korral/storelink/mcpserver/internal/app/apptest"
	"github.com/korral/storelink/mcpserver/internal/mcptest"
)

// testOptions are the surroundings of a deployment pointing at upstream (a
// stand-in StoreLink) with one store key and a private state database;
// the logs go to the returned buffer.
func testOptions(t *testing.T, upstream string, vars map[string]string) (Options, *mcptest.SyncBuffer) {
	t.Helper()
	all := apptest.Vars(t, upstream, vars)
	logs := &mcptest.SyncBuffer{}
	return Options{Getenv: func(k string) string { return all[k] }, ReadFile: os.ReadFile, Log: logs}, logs
}
