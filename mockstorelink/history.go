package mockstorelink

import (
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"sort"
	"time"

	"github.com/korral/storelink/openapi"
)

// historyDays is how far back StoreLink keeps POS transactions.
const historyDays = openapi.HistoryDays

// windowSlack keeps the butter scenario's transactions a minute clear of the
// "24 hours before now" edge, so a caller's clock may differ by a minute.
const windowSlack = time.Minute

// rng is a splitmix64 generator, stable across Go releases.
type rng struct{ state uint64 }

func (r *rng) next() uint64 {
	r.state += 0x9e3779b97f4a7c15
	z := r.state
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// intn returns a number in [0, n); n must be positive.
func (r *rng) intn(n int) int { return int(r.next() % uint64(n)) }

// rngFor derives an independent generator for one named part of the world.
func (w *world) rngFor(parts ...string) *rng {
	h := fnv.New64a()
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], w.seed)
	h.Write(b[:])
	for _, p := range parts {
		h.Write([]byte(p))
		h.Write([]byte{0})
	}
	return &rng{state: h.Sum64()}
}

// profile describes how one SKU sells and is stocked at one store.
type profile struct {
	base, spread int // daily units: base ± spread
	// firstDaysAgo > 0: the SKU was listed this many days ago; no earlier sales.
	firstDaysAgo int
	zeroDaysAgo  []int // open days with no sale at all
	bulkDaysAgo  int   // > 0: the day with one catering-sized transaction
	bulkUnits    int
	volatile     bool
	noSales      bool
	// windowUnits > 0: exactly these units sold in the 24 hours before now.
	windowUnits int

	onHand int64
	// countedDaysAgo > 0: counted at 06:30 local that many days ago;
	// otherwise counted countedAgo before now.
	countedDaysAgo int
	countedAgo     time.Duration
}

const defaultCountedAgo = 35 * time.Minute

// profile returns the fixture pattern of a SKU at a store.
func (w *world) profile(storeID string, k *sku) profile {
	switch storeID + "/" + k.code {
	case StoreSmichov + "/" + SKUButter:
		return profile{base: 20, spread: 3, windowUnits: ButterSoldLast24hSmichov, onHand: ButterOnHandSmichov}
	case StoreBrno + "/" + SKUButter:
		return profile{base: 13, spread: 2, windowUnits: ButterSoldLast24hBrno, onHand: ButterOnHandBrno}
	case StoreSmichov + "/" + SKUSteady:
		return profile{base: 12, spread: 1, onHand: 240}
	case StoreSmichov + "/" + SKUThinHistory:
		return profile{base: 10, spread: 2, firstDaysAgo: 3, onHand: 25}
	case StoreSmichov + "/" + SKUNoSales:
		return profile{noSales: true, onHand: 36}
	case StoreSmichov + "/" + SKUBulkOrder:
		return profile{base: 6, spread: 1, bulkDaysAgo: 5, bulkUnits: 60, onHand: 40}
	case StoreSmichov + "/" + SKUPhantomStockout:
		return profile{base: 22, spread: 3, zeroDaysAgo: []int{2, 3, 9}, onHand: 30}
	case StoreSmichov + "/" + SKUVolatile:
		return profile{base: 15, volatile: true, onHand: 50}
	case StoreSmichov + "/" + SKUStaleCount:
		return profile{base: 8, spread: 2, onHand: 60, countedDaysAgo: 4}
	case StoreSmichov + "/" + SKUNegativeOnHand:
		return profile{base: 14, spread: 3, onHand: -4}
	case StoreSmichov + "/" + SKUInjection:
		return profile{base: 5, spread: 1, onHand: 18}
	case StoreSmichov + "/" + SKUMinimumOrder:
		return profile{base: 18, spread: 4, onHand: 60}
	}
	r := w.rngFor("profile", storeID, k.code)
	base := k.usual - k.usual/4 + r.intn(k.usual/2+1)
	return profile{
		base:   base,
		spread: base/4 + 1,
		onHand: int64(base*3 + r.intn(base+1)),
	}
}

// txn is one point-of-sale line.
type txn struct {
	id    string
	at    time.Time
	units int64
}

// history returns the transactions of a SKU at a store that StoreLink holds
// at anchor: at most 28 days old, none after anchor, newest first. A day's
// sales depend only on the seed and the date.
func (w *world) history(st *store, k *sku, anchor time.Time) []txn {
	p := w.profile(st.id, k)
	local := anchor.In(st.loc)
	oldest := openapi.HistoryStart(anchor)
	var out []txn
	for daysAgo := 0; daysAgo <= historyDays; daysAgo++ {
		day := time.Date(local.Year(), local.Month(), local.Day()-daysAgo, 0, 0, 0, 0, st.loc)
		// Appended in reverse, they end in the order served.
		txns := w.dayTransactions(st, k, p, day, daysAgo)
		for i := len(txns) - 1; i >= 0; i-- {
			if t := txns[i]; !t.at.After(anchor) && !t.at.Before(oldest) {
				out = append(out, t)
			}
		}
	}
	if p.windowUnits > 0 {
		keepBefore := anchor.Add(-24*time.Hour - windowSlack)
		kept := out[:0]
		for _, t := range out {
			if t.at.Before(keepBefore) {
				kept = append(kept, t)
			}
		}
		out = append(kept, w.windowTransactions(st, k, p.windowUnits, anchor)...)
	}
	newerFirst := func(i, j int) bool {
		if !out[i].at.Equal(out[j].at) {
			return out[i].at.After(out[j].at)
		}
		return out[i].id > out[j].id
	}
	// Skip the sort when already sorted; ids are unique.
	if !sort.SliceIsSorted(out, newerFirst) {
		sort.Slice(out, newerFirst)
	}
	return out
}

// dailyUnits is what a SKU sells on one local day, before it is split into
// transactions.
func (w *world) dailyUnits(st *store, k *sku, p profile, day time.Time, daysAgo int) int {
	if p.noSales || (p.firstDaysAgo > 0 && daysAgo > p.firstDaysAgo) {
		return 0
	}
	for _, z := range p.zeroDaysAgo {
		if z == daysAgo {
			return 0
		}
	}
	r := w.rngFor("units", st.id, k.code, day.Format("20060102"))
	if p.volatile {
		// Lean and heavy days alternate by calendar day.
		if (day.Unix()/86400)%2 == 0 {
			return 1 + r.intn(3)
		}
		return 2*p.base + r.intn(p.base)
	}
	return max(0, p.base-p.spread+r.intn(2*p.spread+1))
}

// dayTransactions spreads one day's units over the store's opening hours.
func (w *world) dayTransactions(st *store, k *sku, p profile, day time.Time, daysAgo int) []txn {
	h := st.week[day.Weekday()]
	if h.closed {
		return nil
	}
	units := w.dailyUnits(st, k, p, day, daysAgo)
	bulk := 0
	if p.bulkDaysAgo > 0 && daysAgo == p.bulkDaysAgo {
		bulk = p.bulkUnits
	}
	if units == 0 && bulk == 0 {
		return nil
	}
	date := day.Format("20060102")
	r := w.rngFor("txns", st.id, k.code, date)
	var pieces []int
	if bulk > 0 {
		pieces = append(pieces, bulk)
	}
	for units > 0 {
		u := min(units, 1+r.intn(3))
		pieces = append(pieces, u)
		units -= u
	}
	openAt := time.Date(day.Year(), day.Month(), day.Day(), h.open/60, h.open%60, 0, 0, st.loc)
	span := (h.close - h.open) * 60
	out := make([]txn, len(pieces))
	for i, u := range pieces {
		out[i] = txn{at: openAt.Add(time.Duration(r.intn(span)) * time.Second), units: int64(u)}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].at.Before(out[j].at) })
	for i := range out {
		out[i].id = fmt.Sprintf("T-%s-%s-%s-%04d", st.id, date, k.code, i+1)
	}
	return out
}

// windowTransactions places exactly units sold in the 24 hours before anchor,
// during opening hours, at least windowSlack after the window opens.
func (w *world) windowTransactions(st *store, k *sku, units int, anchor time.Time) []txn {
	intervals := st.openIntervals(anchor.Add(-24*time.Hour+windowSlack), anchor)
	var total time.Duration
	for _, iv := range intervals {
		total += iv.end.Sub(iv.start)
	}
	if total <= 0 {
		// Only a store closed all day gets here; the butter stores never are.
		return nil
	}
	r := w.rngFor("window", st.id, k.code)
	var pieces []int
	for units > 0 {
		u := min(units, 1+r.intn(2))
		pieces = append(pieces, u)
		units -= u
	}
	// One sale per equal slot of trading time, at a random second in it.
	out := make([]txn, len(pieces))
	slot := total / time.Duration(len(pieces))
	for i, u := range pieces {
		jitter := time.Duration(r.intn(max(1, int(slot/time.Second)))) * time.Second
		offset := (time.Duration(i)*slot + jitter).Truncate(time.Second)
		at := locate(intervals, offset).In(st.loc)
		out[i] = txn{
			id:    fmt.Sprintf("T-%s-%s-%s-W%03d", st.id, at.Format("20060102"), k.code, i+1),
			at:    at,
			units: int64(u),
		}
	}
	return out
}

type interval struct{ start, end time.Time }

// openIntervals returns the store's trading time within [from, to].
func (st *store) openIntervals(from, to time.Time) []interval {
	lf, lt := from.In(st.loc), to.In(st.loc)
	first := time.Date(lf.Year(), lf.Month(), lf.Day()-1, 0, 0, 0, 0, st.loc)
	last := time.Date(lt.Year(), lt.Month(), lt.Day(), 0, 0, 0, 0, st.loc)
	var out []interval
	for day := first; !day.After(last); day = time.Date(day.Year(), day.Month(), day.Day()+1, 0, 0, 0, 0, st.loc) {
		h := st.week[day.Weekday()]
		if h.closed {
			continue
		}
		s := time.Date(day.Year(), day.Month(), day.Day(), h.open/60, h.open%60, 0, 0, st.loc)
		e := time.Date(day.Year(), day.Month(), day.Day(), h.close/60, h.close%60, 0, 0, st.loc)
		if s.Before(from) {
			s = from
		}
		if e.After(to) {
			e = to
		}
		if s.Before(e) {
			out = append(out, interval{s, e})
		}
	}
	return out
}

// locate maps an offset into the concatenation of intervals back to a time.
func locate(intervals []interval, offset time.Duration) time.Time {
	for _, iv := range intervals {
		d := iv.end.Sub(iv.start)
		if offset < d {
			return iv.start.Add(offset)
		}
		offset -= d
	}
	return intervals[len(intervals)-1].end
}

// inventory returns the book stock of a SKU at a store and when it was counted.
func (w *world) inventory(st *store, k *sku, anchor time.Time) (onHand int64, countedAt time.Time) {
	p := w.profile(st.id, k)
	if p.countedDaysAgo > 0 {
		l := anchor.In(st.loc)
		return p.onHand, time.Date(l.Year(), l.Month(), l.Day()-p.countedDaysAgo, 6, 30, 0, 0, st.loc)
	}
	ago := p.countedAgo
	if ago == 0 {
		ago = defaultCountedAgo
	}
	return p.onHand, anchor.Add(-ago).In(st.loc)
}
