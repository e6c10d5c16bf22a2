package tools

import (
	"context"
	"fmt"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/korral/storelink/mcpserver/internal/apperr"
	"github.com/korral/storelink/mcpserver/internal/domain"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// storesPerAnswer bounds one answer of the store list, and so its fan-out
// to StoreLink: the whole chain (about 180 stores) fits in one page, and a
// keyring of thousands is read page by page with after_store_id.
const storesPerAnswer = 200

type listStoresIn struct {
	AfterStoreID string `json:"after_store_id,omitempty" jsonschema:"a truncated answer's next_after_store_id"`
}

type listStoresOut struct {
	Stores              []authorizedStore `json:"stores"`
	Count               int               `json:"count"`
	CountTotalAvailable int               `json:"count_total_available"`
	Truncated           bool              `json:"truncated"`
	NextAfterStoreID    string            `json:"next_after_store_id,omitempty"`
}

// authorizedStore is one store of the list. open_now is set only when the
// store's hours were read, never false for want of them; it is omitted,
// not null, so the schema keeps it a plain boolean.
type authorizedStore struct {
	StoreID           string     `json:"store_id"`
	Name              string     `json:"name,omitempty"`
	Timezone          string     `json:"timezone,omitempty"`
	LocalTimeNow      string     `json:"local_time_now,omitempty"`
	OpeningHoursToday string     `json:"opening_hours_today,omitempty"`
	OpenNow           *bool      `json:"open_now,omitempty"`
	ClosesInMinutes   *int       `json:"closes_in_minutes,omitempty"`
	Unknown           []string   `json:"unknown,omitempty"`
	Error             *ErrorBody `json:"error,omitempty"`
}

func addListAuthorizedStores(ms *mcp.Server, s *server) {
	register(ms, s, toolSpec[listStoresIn, listStoresOut]{
		tool: &mcp.Tool{
			Name:        "korral_list_authorized_stores",
			Title:       "List authorized stores",
			Description: "The stores you may use, with local time, today's hours and minutes to closing. Call it first to learn valid store_id values.",
			Annotations: readAnnotations(),
		},
		shape: func(p map[string]*jsonschema.Schema) {
			p["after_store_id"].Pattern = storeIDPattern
		},
		handle: s.listAuthorizedStores,
	})
}

func (s *server) listAuthorizedStores(ctx context.Context, c *call, in listStoresIn) (*listStoresOut, error) {
	kr := s.callStores(c)
	if kr == nil {
		return nil, apperr.New(apperr.InternalError, "no keyring loaded", "")
	}
	ids, more := kr.Page(in.AfterStoreID, storesPerAnswer)
	out := &listStoresOut{Stores: make([]authorizedStore, len(ids)), Count: len(ids), CountTotalAvailable: kr.Len(),
		Truncated: more}
	if more {
		out.NextAfterStoreID = ids[len(ids)-1]
	}
	now := s.opts.Now()
	fanOut(len(ids), len(ids), func(i int) {
		st, err := s.opts.Upstream.Store(ctx, ids[i])
		if err != nil {
			out.Stores[i] = authorizedStore{StoreID: ids[i], Error: s.storeError(ctx, c, ids[i], err)}
			return
		}
		out.Stores[i] = describeStore(st, now)
	})
	names := make([]*string, len(out.Stores))
	for i := range out.Stores {
		names[i] = &out.Stores[i].Name
	}
	markUntrusted(names...)
	c.summary = fmt.Sprintf("Listed the %d store(s) this deployment may use.", len(ids))
	if len(ids) != kr.Len() {
		c.summary = fmt.Sprintf("Listed %d of the %d store(s) this deployment may use, after store %q.", len(ids), kr.Len(), in.AfterStoreID)
	}
	return out, nil
}

// describeStore is one store of the list. Without its opening hours (a
// qualifier, ADR 0030) it says nothing of today's hours, open_now or the
// close, and unknown says so; without its name, the id names it.
func describeStore(st domain.Store, now time.Time) authorizedStore {
	out := authorizedStore{StoreID: st.ID, Name: st.Name, Timezone: st.Timezone, Unknown: st.Unknown.Caveats()}
	loc, err := domain.Location(st.Timezone)
	if err != nil {
		return out
	}
	local := now.In(loc)
	out.LocalTimeNow = local.Format(time.RFC3339)
	if st.Unknown.Has("store.opening_hours") {
		return out
	}
	day := st.Hours[local.Weekday()]
	if day.Closed {
		out.OpeningHoursToday = "closed"
		out.OpenNow = ptr(false)
		return out
	}
	out.OpeningHoursToday = clock(day.Opens) + "-" + clock(day.Closes)
	minute := local.Hour()*60 + local.Minute()
	open := minute >= day.Opens && minute < day.Closes
	out.OpenNow = &open
	if open {
		out.ClosesInMinutes = ptr(day.Closes - minute)
	}
	return out
}

func clock(m int) string { return fmt.Sprintf("%02d:%02d", m/60, m%60) }
