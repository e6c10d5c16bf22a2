package main

import (
	"fmt"

	"github.com/korral/storelink/mockstorelink"
)

// distanceFigures is one row of the distance phase over the runs.
type distanceFigures struct {
	label, master, note string
	stores              int
	limit               distanceLimit
	available           bool
	// calls, wall, p90 and floor are per run: the calls measured, the
	// median and p90 wall at distance, and the floor's median wall.
	calls, wall, p90, floor spread
	// ratio is the median wall against the limit within each run,
	// overFloor the round trips less the floor.
	ratio, roundTrips, overFloor spread
	received                     []requestCounts
}

func (d distanceFigures) met() bool { return d.limit.met(d.ratio.Median) }

// measured is the figure the limit is about, with its ratio to the limit.
func (d distanceFigures) measured() string {
	if d.limit.RoundTrips > 0 {
		return fmt.Sprintf("%s round trips, %sx the limit", d.roundTrips.format(2), d.ratio.format(2))
	}
	return fmt.Sprintf("%s ms, %sx the limit", d.wall.format(0), d.ratio.format(2))
}

// distanceRows gathers the distance phase's rows over the runs, in the
// order the phase measures them. A row is available when any run made it.
func (r *report) distanceRows() []distanceFigures {
	var out []distanceFigures
	world := 0
	for _, run := range r.Runs {
		if run.Distance != nil {
			world = run.Distance.WorldStores
			break
		}
	}
	if world == 0 {
		return nil
	}
	for _, master := range distanceMasters {
		for _, n := range distanceCases {
			key := distanceRow{Stores: n, Master: master}.key()
			var rows []distanceRow
			for _, run := range r.Runs {
				if run.Distance == nil {
					continue
				}
				for _, row := range run.Distance.Rows {
					if row.key() == key {
						rows = append(rows, row)
					}
				}
			}
			if len(rows) == 0 {
				continue
			}
			f := distanceFigures{label: storesLabel(n, world), master: master, stores: n, limit: limitFor(n, master)}
			var calls, wall, p9, floor, ratio, rt, over []float64
			for _, row := range rows {
				if !row.Available || len(row.WallMS) == 0 {
					if f.note == "" {
						f.note = row.Note
					}
					continue
				}
				f.available = true
				med := median(row.WallMS)
				calls = append(calls, float64(len(row.WallMS)))
				wall = append(wall, med)
				p9 = append(p9, p90(row.WallMS))
				ratio = append(ratio, f.limit.ratio(med, distanceDelay))
				rt = append(rt, roundTrips(med, distanceDelay))
				if len(row.FloorMS) > 0 {
					fl := median(row.FloorMS)
					floor = append(floor, fl)
					over = append(over, roundTrips(med-fl, distanceDelay))
				}
				if row.Received != nil {
					f.received = append(f.received, *row.Received)
				}
			}
			f.calls, f.wall, f.p90, f.floor = spreadOf(calls), spreadOf(wall), spreadOf(p9), spreadOf(floor)
			f.ratio, f.roundTrips, f.overFloor = spreadOf(ratio), spreadOf(rt), spreadOf(over)
			out = append(out, f)
		}
	}
	return out
}

// distanceMarkdown renders the distance phase: walls, round trips, limits
// and ratios, the floor, and what the mock received.
func (r *report) distanceMarkdown(p func(string, ...any)) {
	rows := r.distanceRows()
	if len(rows) == 0 {
		return
	}
	p("## StoreLink at a distance: %d ms on every route, a world of %d stores and %d SKUs", distanceDelay.Milliseconds(), distanceWorldStores, distanceWorldSKUs)
	p("")
	p("`korral_check_stock_risk` for the butter (SKU %s) over stdio against `mockstorelink --stores %d --skus %d` with its latency fault on every route and a key for every store; store 47 first, then by id. Master data cold is `MASTER_DATA_TTL=0` (every call reads the stores, the SKU and its supplier again), warm the default TTL after one call. The sweep is `store_ids: [\"all\"]`. Round trips are the median wall over %d ms: the critical path in StoreLink round trips. The floor is the same call with no latency, in the same run: the local work, which a loaded machine inflates; round trips over the floor leave it out. Up to %v calls a row (the sweep half), each run's figures summarised over the runs.",
		mockstorelink.SKUButter, distanceWorldStores, distanceWorldSKUs, distanceDelay.Milliseconds(), r.Config["distance_calls"])
	p("")
	p("| Stores | Master data | Calls | Median ms | p90 ms | Round trips | Limit | × limit | Met | Floor median ms | Round trips over the floor |")
	p("|---|---|---|---|---|---|---|---|---|---|---|")
	for _, d := range rows {
		if !d.available {
			p("| %s | %s | 0 | not available: %s | | | %s | | n/a | | |", d.label, d.master, d.note, d.limit)
			continue
		}
		p("| %s | %s | %s | %s | %s | %s | %s | %sx | %s | %s | %s |", d.label, d.master, d.calls.format(0), d.wall.format(0), d.p90.format(0),
			d.roundTrips.format(2), d.limit, d.ratio.format(2), met(d.met()), d.floor.format(1), d.overFloor.format(2))
	}
	p("")
	p("What the mock received for one call at distance (`/_admin/requests`; per store: the fewest–most of any store asked). Expected: each store's inventory and POS once, the SKU and its supplier at most once (none when warm), nothing else.")
	p("")
	p("| Stores | Master data | Stores asked | Inventory per store | POS per store | Store reads | SKU reads | Supplier reads | Other | As expected |")
	p("|---|---|---|---|---|---|---|---|---|---|")
	for _, d := range rows {
		if len(d.received) == 0 {
			continue
		}
		each := func(f func(requestCounts) int) spread {
			var v []float64
			for _, c := range d.received {
				v = append(v, float64(f(c)))
			}
			return spreadOf(v)
		}
		perStore := func(lo, hi func(requestCounts) int) string {
			a, b := each(lo), each(hi)
			if a.Min == b.Max {
				return a.format(0)
			}
			return fmt.Sprintf("%.0f–%.0f", a.Min, b.Max)
		}
		want := d.stores
		if want == 0 {
			want = distanceWorldStores
		}
		ok := true
		for _, c := range d.received {
			ok = ok && c.asExpected(want)
		}
		p("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |", d.label, d.master,
			each(func(c requestCounts) int { return c.Stores }).format(0),
			perStore(func(c requestCounts) int { return c.InventoryMin }, func(c requestCounts) int { return c.InventoryMax }),
			perStore(func(c requestCounts) int { return c.POSMin }, func(c requestCounts) int { return c.POSMax }),
			each(func(c requestCounts) int { return c.StoreReads }).format(0),
			each(func(c requestCounts) int { return c.SKUReads }).format(0),
			each(func(c requestCounts) int { return c.SupplierReads }).format(0),
			each(func(c requestCounts) int { return c.Other }).format(0),
			met(ok))
	}
	p("")
}
