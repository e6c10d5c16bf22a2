package contract

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"strings"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	sl "github.com/korral/storelink/storelinkclient"
)

// Times without an offset are FindingLocalTime; with
// info.x-korral-timestamps: store-local the check reads them in the store's
// zone (ADR 0032).

// FindingLocalTime is the kind of a finding about a date-time without an
// offset, where the contract does not declare store-local times.
const FindingLocalTime = "local-time"

// localTimeCause is the id of the one cause every FindingLocalTime shares.
const localTimeCause = "timestamps:store-local"

// storeLocalTimes reads the contract's declaration. Any value other than
// sl.TimestampsStoreLocal is an error.
func storeLocalTimes(doc *openapi3.T) (bool, error) {
	if doc.Info == nil {
		return false, nil
	}
	v, ok := doc.Info.Extensions[sl.TimestampsExtension]
	if !ok {
		return false, nil
	}
	if s, _ := v.(string); s == sl.TimestampsStoreLocal {
		return true, nil
	}
	return false, fmt.Errorf("the StoreLink contract's info.%s is %v; the one value it takes is %s", sl.TimestampsExtension, v, sl.TimestampsStoreLocal)
}

// localTimeFinding is the finding for a schema error that is only a
// date-time without an offset, if se is one.
func localTimeFinding(se *openapi3.SchemaError, path string) (Finding, bool) {
	if se.SchemaField != "format" || se.Schema == nil || se.Schema.Format != "date-time" {
		return Finding{}, false
	}
	s, ok := se.Value.(string)
	if !ok || !sl.IsLocalDateTime(s) {
		return Finding{}, false
	}
	return Finding{Kind: FindingLocalTime, Path: path, Schema: "#/info",
		Message: "a date-time without an offset: StoreLink sends local times, which the contract does not declare"}, true
}

// storeScoped is the store of a request under /v1/stores/{store_id}/, if
// it is one.
func storeScoped(path string) (string, bool) {
	rest, ok := strings.CutPrefix(path, "/v1/stores/")
	if !ok {
		return "", false
	}
	id, sub, ok := strings.Cut(rest, "/")
	return id, ok && id != "" && sub != ""
}

// localize reads the local times of a store-scoped answer in the store's
// zone, when declared; without the zone the answer is left as it is.
func (r *runner) localize(ctx context.Context, req request, status int, body []byte) []byte {
	if !r.spec.storeLocal || status < 200 || status >= 300 {
		return body
	}
	store, ok := storeScoped(req.path)
	if !ok {
		return body
	}
	loc := r.storeZone(ctx, store)
	if loc == nil {
		return body
	}
	out, _ := sl.LocalizeTimestamps(body, loc)
	return out
}

// storeZone is the store's timezone, read once per run; nil when it
// cannot be read.
func (r *runner) storeZone(ctx context.Context, store string) *time.Location {
	if loc, ok := r.st.zones[store]; ok {
		return loc
	}
	if r.st.zones == nil {
		r.st.zones = map[string]*time.Location{}
	}
	r.st.zones[store] = nil
	if r.cfg.Keyring[store] == "" || r.sent >= r.cfg.MaxRequests || r.pace.wait(ctx) != nil {
		return nil
	}
	status, _, body, err := r.send(ctx, get("/v1/stores/"+store, nil, keyOwn, store), nil)
	if err != nil || status != http.StatusOK {
		return nil
	}
	var st struct {
		Timezone string `json:"timezone"`
	}
	if json.Unmarshal(body, &st) != nil || st.Timezone == "" {
		return nil
	}
	loc, err := time.LoadLocation(st.Timezone)
	if err != nil {
		return nil
	}
	r.st.zones[store] = loc
	return loc
}

// declareLocalTimes proposes the declaration of store-local times under
// the contract's info.
func (s *suggester) declareLocalTimes(c Cause) (change, evidence, why string) {
	e := s.begin()
	info, ok := find(e.lines, "info")
	if !ok {
		return "", "", "the contract has no info block to declare store-local times in: add info." + sl.TimestampsExtension + ": " + sl.TimestampsStoreLocal + " by hand"
	}
	if _, ok := child(e.lines, info, sl.TimestampsExtension); ok {
		return "", "", "info." + sl.TimestampsExtension + " is already set to another value: read StoreLink's documentation and set it by hand"
	}
	ind := indentOf(e.lines[info]) + 2
	if kids := children(e.lines, info); len(kids) > 0 {
		ind = indentOf(e.lines[kids[0]])
	}
	e.insert(info+1, strings.Repeat(" ", ind)+sl.TimestampsExtension+": "+sl.TimestampsStoreLocal+"\n")
	evidence = seen(c) + ": date-times without an offset, read as the store's local time (ADR 0032)"
	if err := s.commit(e, evidence); err != nil {
		return "", "", "declaring store-local times would not validate: " + firstLine(err.Error())
	}
	return "declare info." + sl.TimestampsExtension + ": " + sl.TimestampsStoreLocal + " (a date-time without an offset is the store's local time)", evidence, ""
}

// localQuery writes a request's since in the store's zone when store-local
// times are declared, so the echoed since reads back as the same instant.
// A since that is not a time is sent as it is.
func (r *runner) localQuery(ctx context.Context, req request) request {
	if !r.spec.storeLocal || req.query.Get("since") == "" {
		return req
	}
	store, ok := storeScoped(req.path)
	if !ok {
		return req
	}
	since, err := time.Parse(time.RFC3339Nano, req.query.Get("since"))
	if err != nil {
		return req
	}
	loc := r.storeZone(ctx, store)
	if loc == nil {
		return req
	}
	q := maps.Clone(req.query)
	q.Set("since", since.In(loc).Format(time.RFC3339Nano))
	req.query = q
	return req
}

// localize learns a store's zone from proxied store answers and reads the
// store's other answers in it; it sends no request of its own.
func (p *Proxy) localize(x *exchange, body []byte) []byte {
	if rest, ok := strings.CutPrefix(x.req.path, "/v1/stores/"); ok && rest != "" && !strings.Contains(rest, "/") {
		var st struct {
			Timezone string `json:"timezone"`
		}
		if json.Unmarshal(body, &st) == nil && st.Timezone != "" {
			if loc, err := time.LoadLocation(st.Timezone); err == nil {
				p.mu.Lock()
				p.zones.put(rest, loc)
				p.mu.Unlock()
			}
		}
		return body
	}
	store, ok := storeScoped(x.req.path)
	if !ok {
		return body
	}
	p.mu.Lock()
	loc, ok := p.zones.get(store)
	p.mu.Unlock()
	if !ok {
		return body
	}
	out, _ := sl.LocalizeTimestamps(body, loc)
	return out
}
