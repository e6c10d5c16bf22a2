package contract

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strings"
	"time"
)

// ReplayFormat names the replay file's format and version.
const ReplayFormat = "storelink-contract-replay/1"

// ReplayFile holds a check's failing generated cases, shrunk, for
// [Replay]. Keys are named by role and store only.
type ReplayFile struct {
	Format          string `json:"format"`
	ContractVersion string `json:"contract_version"`
	// BaseURL is the StoreLink the cases failed against; replay sends
	// them there unless told otherwise.
	BaseURL string `json:"base_url"`
	Seed    uint64 `json:"seed"`
	Cases   []Case `json:"cases"`
}

// ReplayFile returns the report's failing generated cases as a replay
// file; it holds no case when none failed.
func (r *Report) ReplayFile() *ReplayFile {
	f := &ReplayFile{Format: ReplayFormat, ContractVersion: r.ContractVersion, BaseURL: r.BaseURL, Cases: []Case{}}
	if r.Generated != nil {
		f.Seed = r.Generated.Seed
	}
	for _, p := range r.Probes {
		if p.Case != nil {
			f.Cases = append(f.Cases, *p.Case)
		}
	}
	return f
}

var (
	replayMethods = []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete}
	replayRoles   = []string{roleOwn, roleOther, roleUnknown, roleNone}
	replayExpects = []string{expectValid, expectInvalid, expectUnauthenticated, expectForbidden, expectMethod, expectContentType}
)

// ReadReplayFile reads and checks a replay file. Errors name the case and
// the field, so a hand-edited file can be fixed.
func ReadReplayFile(path string) (*ReplayFile, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read replay file: %w", err)
	}
	var f ReplayFile
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("replay file %s is not a replay file (JSON): %v", path, err)
	}
	if f.Format != ReplayFormat {
		return nil, fmt.Errorf("replay file %s: format %q, want %q (written by storelink-contract check --generate --replay-out)", path, f.Format, ReplayFormat)
	}
	for i, c := range f.Cases {
		bad := func(what string) error {
			return fmt.Errorf("replay file %s: case %d (%s): %s", path, i+1, c.ID, what)
		}
		switch {
		case !slices.Contains(replayMethods, c.Method):
			return nil, bad("method must be one of " + strings.Join(replayMethods, ", "))
		case !strings.HasPrefix(c.Path, "/") || strings.ContainsAny(c.Path, "?#"):
			return nil, bad("path must start with / and carry no query")
		case !slices.Contains(replayRoles, c.Key):
			return nil, bad("key must be one of " + strings.Join(replayRoles, ", "))
		case !storeIDPattern.MatchString(c.Store):
			return nil, bad("store must be a store id")
		case !slices.Contains(replayExpects, c.Expect):
			return nil, bad("expect must be one of " + strings.Join(replayExpects, ", "))
		case c.Then != nil && (c.Then.Method != http.MethodGet || !strings.HasPrefix(c.Then.PathTemplate, "/")):
			return nil, bad("then must be a GET of a path template")
		}
	}
	return &f, nil
}

// Replay resends the cases of a replay file to cfg.BaseURL and checks each
// answer as check --generate did. Writes are sent only with
// cfg.AllowWrites to cfg.WriteStore; the bounds of cfg apply.
func Replay(ctx context.Context, cfg Config, file *ReplayFile) (*Report, error) {
	if file == nil {
		return nil, errors.New("no replay file")
	}
	r, rep, start, err := newRun(cfg)
	if err != nil {
		return nil, err
	}
	cfg = r.cfg
	ctx, cancel := context.WithTimeout(ctx, cfg.Deadline)
	defer cancel()
	for i := range file.Cases {
		c := file.Cases[i]
		if ctx.Err() != nil {
			rep.Aborted = fmt.Sprintf("the replay's deadline (%s) passed with %d cases not sent", cfg.Deadline, len(file.Cases)-i)
			break
		}
		if c.Method != http.MethodGet && (!cfg.AllowWrites || c.Store != cfg.WriteStore) {
			exp, class := expected(&c)
			rep.Probes = append(rep.Probes, Result{Operation: c.Operation, Endpoint: c.Method + " " + c.Path, Probe: c.Name,
				Phase: c.Phase, CaseID: c.ID, Expected: exp, ExpectedClass: class, Verdict: Skipped,
				Detail: fmt.Sprintf("a write: replay it with --allow-writes --write-store %s", c.Store)})
			continue
		}
		rs := r.runCase(ctx, &c)
		if anyDrift(rs) {
			keepCase(&c, rs)
		}
		rep.Probes = append(rep.Probes, rs...)
	}
	rep.Requests = r.sent
	rep.OrdersCreated = append([]CreatedOrder{}, r.orders...)
	rep.DurationMS = millis(time.Since(start))
	rep.finish()
	rep.Redact(Secrets(cfg)...)
	return rep, nil
}
