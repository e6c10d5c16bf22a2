package foreignstorelink

import (
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"sort"
	"time"
	_ "time/tzdata" // the stores' zones resolve even on hosts without a zone database
)

// historyDays is how far back the point-of-sale history reaches.
const historyDays = 28

// dayHours is one weekday's opening hours; a closed day has Closed set and no
// times, exactly as the contract's DayHours.
type dayHours struct {
	Closed bool   `json:"closed"`
	Opens  string `json:"opens,omitempty"`
	Closes string `json:"closes,omitempty"`
}

// weeklyHours has the contract's WeeklyHours shape.
type weeklyHours struct {
	Monday    dayHours `json:"monday"`
	Tuesday   dayHours `json:"tuesday"`
	Wednesday dayHours `json:"wednesday"`
	Thursday  dayHours `json:"thursday"`
	Friday    dayHours `json:"friday"`
	Saturday  dayHours `json:"saturday"`
	Sunday    dayHours `json:"sunday"`
}

func (w weeklyHours) on(d time.Weekday) dayHours {
	switch d {
	case time.Monday:
		return w.Monday
	case time.Tuesday:
		return w.Tuesday
	case time.Wednesday:
		return w.Wednesday
	case time.Thursday:
		return w.Thursday
	case time.Friday:
		return w.Friday
	case time.Saturday:
		return w.Saturday
	default:
		return w.Sunday
	}
}

func open(opens, closes string) dayHours { return dayHours{Opens: opens, Closes: closes} }

// week builds weekly hours from the Monday-to-Friday, Saturday and Sunday hours.
func week(weekday, saturday, sunday dayHours) weeklyHours {
	return weeklyHours{weekday, weekday, weekday, weekday, weekday, saturday, sunday}
}

type store struct {
	ID       string
	Name     string
	Timezone string
	Region   string // D7: not in the contract
	Hours    weeklyHours
	loc      *time.Location
}

type sku struct {
	SKU        string
	Name       string
	Brand      string // D8: not in the contract
	Category   string
	SupplierID string
	Unit       string
	CasePack   int
	Chilled    bool
	ShelfLife  int
	index      int // keeps transaction ids of different SKUs apart
}

type supplier struct {
	ID           string // D4: sup_ + 8 lowercase hex
	Name         string
	LeadTimeDays int
	Cutoff       string // store-local HH:MM
	MinOrderQty  int    // D4: the contract's minimum_order_units
	ContactEmail string // D4: not in the contract
}

// world is the fixed data the double serves; it never changes after New.
type world struct {
	stores    map[string]*store
	storeIDs  []string // ascending by number
	skus      map[string]*sku
	suppliers map[string]*supplier
	onHand    map[[2]string]int64 // {store, sku} -> units
}

func mustZone(name string) *time.Location {
	loc, err := time.LoadLocation(name)
	if err != nil {
		// time/tzdata is linked in, so this cannot happen for the zones below.
		return time.FixedZone(name, 3600)
	}
	return loc
}

func newWorld() *world {
	w := &world{
		stores:    map[string]*store{},
		skus:      map[string]*sku{},
		suppliers: map[string]*supplier{},
		onHand:    map[[2]string]int64{},
	}
	for _, st := range []*store{
		{ID: "47", Name: "Praha Smíchov", Timezone: "Europe/Prague", Region: "Praha",
			Hours: week(open("07:00", "22:00"), open("07:00", "22:00"), open("08:00", "20:00"))},
		{ID: "55", Name: "Ostrava Poruba", Timezone: "Europe/Prague", Region: "Moravskoslezský kraj",
			Hours: week(open("07:00", "21:00"), open("07:00", "21:00"), open("08:00", "18:00"))},
		{ID: "61", Name: "Wien Mitte", Timezone: "Europe/Vienna", Region: "Wien",
			Hours: week(open("07:00", "21:00"), open("08:00", "18:00"), dayHours{Closed: true})},
		{ID: "102", Name: "Brno Královo Pole", Timezone: "Europe/Prague", Region: "Jihomoravský kraj",
			Hours: week(open("07:00", "21:00"), open("07:00", "21:00"), open("08:00", "20:00"))},
	} {
		st.loc = mustZone(st.Timezone)
		w.stores[st.ID] = st
		w.storeIDs = append(w.storeIDs, st.ID)
	}
	for _, sp := range []*supplier{
		{ID: "sup_5a1c9e02", Name: "Madeta a.s.", LeadTimeDays: 2, Cutoff: "14:00", MinOrderQty: 12,
			ContactEmail: "orders@madeta.example"},
		{ID: "sup_c3f07b19", Name: "Kofola ČeskoSlovensko a.s.", LeadTimeDays: 2, Cutoff: "14:00", MinOrderQty: 24,
			ContactEmail: "objednavky@kofola.example"},
	} {
		w.suppliers[sp.ID] = sp
	}
	for i, k := range []*sku{
		{SKU: "8847291", Name: "Madeta butter 250g", Brand: "Madeta", Category: "dairy",
			SupplierID: "sup_5a1c9e02", Unit: "piece", CasePack: 12, Chilled: true, ShelfLife: 30},
		{SKU: "8801111", Name: "Kofola Original 2l", Brand: "Kofola", Category: "beverages",
			SupplierID: "sup_c3f07b19", Unit: "piece", CasePack: 6, Chilled: false, ShelfLife: 270},
	} {
		k.index = i
		w.skus[k.SKU] = k
	}
	for key, units := range map[[2]string]int64{
		{"47", "8847291"}: 9, {"47", "8801111"}: 31,
		{"102", "8847291"}: 4, {"102", "8801111"}: -3,
		{"55", "8847291"}: 15, {"55", "8801111"}: 20,
		{"61", "8847291"}: 7, {"61", "8801111"}: 12,
	} {
		w.onHand[key] = units
	}
	return w
}

// countedAt is the last stock count before now: 06:30 store-local every day.
func countedAt(st *store, now time.Time) time.Time {
	local := now.In(st.loc)
	c := time.Date(local.Year(), local.Month(), local.Day(), 6, 30, 0, 0, st.loc)
	if c.After(local) {
		c = time.Date(local.Year(), local.Month(), local.Day()-1, 6, 30, 0, 0, st.loc)
	}
	return c
}

// txn is one point-of-sale line.
type txn struct {
	ID    string    `json:"transaction_id"`
	At    time.Time `json:"timestamp"`
	Units int       `json:"units"`
}

// minutes parses "HH:MM" into minutes after midnight.
func minutes(hhmm string) int {
	var h, m int
	if _, err := fmt.Sscanf(hhmm, "%d:%d", &h, &m); err != nil {
		return 0
	}
	return h*60 + m
}

// history is the SKU's sales at the store over the 28 days before now, newest
// first. Each calendar day's sales depend only on the store, the SKU and the
// date, so past days stay put as the clock moves and today's sales appear as
// the day goes on.
func history(st *store, k *sku, now time.Time) []txn {
	local := now.In(st.loc)
	oldest := now.Add(-historyDays * 24 * time.Hour)
	var out []txn
	for d := 0; d <= historyDays; d++ {
		day := time.Date(local.Year(), local.Month(), local.Day()-d, 0, 0, 0, 0, st.loc)
		hours := st.Hours.on(day.Weekday())
		if hours.Closed {
			continue
		}
		opens, closes := minutes(hours.Opens), minutes(hours.Closes)
		if closes <= opens {
			continue
		}
		h := fnv.New64a()
		fmt.Fprintf(h, "%s|%s|%s", st.ID, k.SKU, day.Format("2006-01-02"))
		seed := h.Sum64()
		r := rand.New(rand.NewPCG(seed, seed>>7|1))
		n := 1 + r.IntN(2)
		base := (k.index+1)*100000 + r.IntN(90000)
		for i := 0; i < n; i++ {
			sec := opens*60 + r.IntN((closes-opens)*60)
			at := time.Date(day.Year(), day.Month(), day.Day(), 0, 0, sec, 0, st.loc)
			if at.After(now) || !at.After(oldest) {
				continue
			}
			out = append(out, txn{
				ID:    fmt.Sprintf("T-%s-%s-%06d", st.ID, day.Format("20060102"), base+i),
				At:    at,
				Units: 1 + r.IntN(6),
			})
		}
	}
	sort.Slice(out, func(i, j int) bool { return newer(out[i], out[j]) })
	return out
}

// newer orders transactions newest first, ties broken by id (descending).
func newer(a, b txn) bool {
	if !a.At.Equal(b.At) {
		return a.At.After(b.At)
	}
	return a.ID > b.ID
}
