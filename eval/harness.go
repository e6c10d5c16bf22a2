package eval

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"time"

	"github.com/korral/storelink/mockstorelink"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	_ "modernc.org/sqlite" // the ledger is read straight from the server's state file
)

// ServerPackage is the import path of the server binary the harness builds.
const ServerPackage = "github.com/korral/storelink/cmd/storelink-mcp"

// BuildServer compiles storelink-mcp into dir and returns its path; the
// current directory must be inside this repository.
func BuildServer(ctx context.Context, dir string) (string, error) {
	bin := filepath.Join(dir, "storelink-mcp")
	cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, ServerPackage)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("go build %s: %w\n%s", ServerPackage, err, out.String())
	}
	return bin, nil
}

// Server is one running storelink-mcp process with a connected MCP client.
type Server struct {
	Session *mcp.ClientSession
	cmd     *exec.Cmd
	stderr  bytes.Buffer // written by the process; read only once it has exited
	done    chan struct{}
}

// StartServer spawns bin over stdio with exactly env (plus PATH) and
// connects an MCP client named clientName to it.
func StartServer(ctx context.Context, bin string, env []string, clientName string) (*Server, error) {
	cmd := exec.Command(bin)
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH")}, env...)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	s := &Server{cmd: cmd, done: make(chan struct{})}
	cmd.Stderr = &s.stderr
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", bin, err)
	}
	go func() { _ = cmd.Wait(); close(s.done) }()
	client := mcp.NewClient(&mcp.Implementation{Name: clientName, Version: "1"}, nil)
	cctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	cs, err := client.Connect(cctx, &mcp.IOTransport{Reader: stdout, Writer: stdin}, nil)
	if err != nil {
		s.Stop()
		return nil, fmt.Errorf("connect to storelink-mcp: %w\nserver stderr:\n%s", err, s.Stderr())
	}
	s.Session = cs
	return s, nil
}

// Stop closes the session (the server exits on end of input), waits a
// bounded time, and kills the process by PID if it is still there.
func (s *Server) Stop() {
	if s.Session != nil {
		_ = s.Session.Close()
	}
	select {
	case <-s.done:
	case <-time.After(5 * time.Second):
		_ = s.cmd.Process.Kill()
		<-s.done
	}
}

// Stderr is everything the server logged. Call it after Stop: the buffer
// is safe to read only once the process has exited.
func (s *Server) Stderr() string { return s.stderr.String() }

// World is a mock StoreLink on loopback and the files a server needs to use
// it.
type World struct {
	Mock        *mockstorelink.Running
	Dir         string
	KeyringPath string
	StatePath   string
}

// NewWorld starts a mock StoreLink with the real clock and writes its
// default keyring into dir.
func NewWorld(dir string) (*World, error) {
	m, err := mockstorelink.Start(mockstorelink.Options{})
	if err != nil {
		return nil, err
	}
	w := &World{Mock: m, Dir: dir, KeyringPath: filepath.Join(dir, "keyring.json"), StatePath: filepath.Join(dir, "state.db")}
	b, _ := json.Marshal(m.Server.DefaultKeyring())
	if err := os.WriteFile(w.KeyringPath, b, 0o600); err != nil {
		_ = m.Close()
		return nil, err
	}
	return w, nil
}

// Close stops the mock.
func (w *World) Close() { _ = w.Mock.Close() }

// Env is the server environment for this world, before scenario settings.
func (w *World) Env() []string {
	return []string{
		"UPSTREAM_BASE_URL=" + w.Mock.URL,
		"STORELINK_KEYRING_FILE=" + w.KeyringPath,
		"STATE_DB_PATH=" + w.StatePath,
		"HOME=" + w.Dir,
		"LOG_LEVEL=warn",
	}
}

// ApprovalEnv is the environment that turns approval mode on.
func (w *World) ApprovalEnv() []string {
	return []string{"WRITE_APPROVAL=required"}
}

// LedgerEntry is one row of the server's order ledger, as far as checks
// care about it.
type LedgerEntry struct {
	IdempotencyKey string `json:"idempotency_key"`
	StoreID        string `json:"store_id"`
	SKU            string `json:"sku"`
	QuantityUnits  int64  `json:"quantity_units"`
	State          string `json:"state"`
	OrderID        string `json:"order_id,omitempty"`
}

// ReadLedger reads the ledger from the state file; a missing file or table
// is an empty ledger.
func ReadLedger(path string) (map[string]LedgerEntry, error) {
	out := map[string]LedgerEntry{}
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return out, nil
	}
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		return nil, err
	}
	defer db.Close()
	var n int
	if err := db.QueryRow(`SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'entries'`).Scan(&n); err != nil {
		return nil, fmt.Errorf("read ledger: %w", err)
	}
	if n == 0 {
		return out, nil
	}
	rows, err := db.Query(`SELECT idempotency_key, store_id, sku, quantity_units, state, COALESCE(order_id, '') FROM entries`)
	if err != nil {
		return nil, fmt.Errorf("read ledger: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var e LedgerEntry
		if err := rows.Scan(&e.IdempotencyKey, &e.StoreID, &e.SKU, &e.QuantityUnits, &e.State, &e.OrderID); err != nil {
			return nil, err
		}
		out[e.IdempotencyKey] = e
	}
	return out, rows.Err()
}

// ledgerChanges lists the entries added or changed between two snapshots,
// ordered by idempotency key.
func ledgerChanges(before, after map[string]LedgerEntry) []LedgerEntry {
	var out []LedgerEntry
	for k, e := range after {
		if b, ok := before[k]; !ok || b != e {
			out = append(out, e)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].IdempotencyKey < out[j].IdempotencyKey })
	return out
}
