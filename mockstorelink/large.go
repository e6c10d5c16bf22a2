package mockstorelink

import (
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"
)

// The size of the world. A large world keeps the fixture stores and SKUs
// and adds generated ones up to [Options.Stores] and [Options.SKUs].
const (
	// FixtureStores is the number of stores of the fixture world.
	FixtureStores = 6
	// FixtureSKUs is the number of SKUs of the fixture world (SKUUnknown
	// is not one of them).
	FixtureSKUs = 12
	// MaxStores bounds Options.Stores (the contract's store list limit).
	MaxStores = 1000
	// MaxSKUs bounds Options.SKUs, keeping generated codes at seven digits.
	MaxSKUs = 100000

	// generatedStoreBase + i is the id of the i-th store past the fixtures;
	// every fixture id is below it.
	generatedStoreBase = 1000
	// generatedSKUBase + i is the code of the i-th SKU past the fixtures;
	// no fixture or checker code has this shape.
	generatedSKUBase = 9000000
	// skusPerSupplier is the generated SKUs per generated supplier.
	skusPerSupplier = 100
	// busyEvery makes every SKU whose index is a multiple of it a busy
	// seller, filling many POS pages.
	busyEvery = 1000
	// busyDailyUnits is a busy SKU's daily base in units.
	busyDailyUnits = 1000
	// generatedSupplierPrefix starts a generated supplier's id: SUP-G0001.
	generatedSupplierPrefix = "SUP-G"
)

// StoreIDAt returns the id of the i-th store (1-based): fixture stores by
// id, then generated ones; "" when i is out of 1..MaxStores. Whether it
// exists depends on Options.Stores.
func StoreIDAt(i int) string {
	switch {
	case i < 1 || i > MaxStores:
		return ""
	case i <= FixtureStores:
		return fixtureStoreIDs[i-1]
	}
	return strconv.Itoa(generatedStoreBase + i)
}

// SKUAt returns the code of the i-th SKU (1-based): fixture SKUs, then
// generated ones; "" when i is out of 1..MaxSKUs.
func SKUAt(i int) string {
	switch {
	case i < 1 || i > MaxSKUs:
		return ""
	case i <= FixtureSKUs:
		return fixtureSKUCodes[i-1]
	}
	return strconv.Itoa(generatedSKUBase + i)
}

var (
	fixtureStoreIDs = []string{StoreOlomouc, StoreSmichov, StoreOstrava, StoreBrno, StorePlzen, StoreVienna}
	fixtureSKUCodes = []string{SKUButter, SKUSteady, SKUThinHistory, SKUNoSales, SKUBulkOrder, SKUPhantomStockout,
		SKUVolatile, SKUStaleCount, SKUNegativeOnHand, SKUQuirk, SKUInjection, SKUMinimumOrder}
)

// checkSize reports whether a world size is allowed; 0 means the fixture
// world's count.
func checkSize(stores, skus int) error {
	if stores != 0 && (stores < FixtureStores || stores > MaxStores) {
		return fmt.Errorf("stores: want %d to %d (0 = the fixture world's %d), got %d", FixtureStores, MaxStores, FixtureStores, stores)
	}
	if skus != 0 && (skus < FixtureSKUs || skus > MaxSKUs) {
		return fmt.Errorf("skus: want %d to %d (0 = the fixture world's %d), got %d", FixtureSKUs, MaxSKUs, FixtureSKUs, skus)
	}
	return nil
}

// newSizedWorld is the fixture world grown to stores and SKUs, lazily.
func newSizedWorld(seed int64, stores, skus int) *world {
	w := newWorld(seed)
	w.nStores = max(stores, len(w.storeIDs))
	w.nSKUs = max(skus, len(w.skuCodes))
	if extra := w.nSKUs - len(w.skuCodes); extra > 0 {
		w.nSuppliers = (extra + skusPerSupplier - 1) / skusPerSupplier
	}
	w.nameOffset = w.rngFor("store-names").intn(len(towns) * len(districts))
	return w
}

// large reports whether the world has more than the fixtures.
func (w *world) large() bool {
	return w.nStores > len(w.storeIDs) || w.nSKUs > len(w.skuCodes)
}

// index parses a generated id base+i with i in (fixtures, n]; 0 when the
// id is not one.
func index(id string, base, fixtures, n int) int {
	if id == "" || id[0] == '0' || len(id) > 9 {
		return 0
	}
	v, err := strconv.Atoi(id)
	if err != nil || strconv.Itoa(v) != id {
		return 0
	}
	if i := v - base; i > fixtures && i <= n {
		return i
	}
	return 0
}

// store returns the store with this id, a fixture or a generated one.
func (w *world) store(id string) (*store, bool) {
	if st, ok := w.stores[id]; ok {
		return st, true
	}
	if i := index(id, generatedStoreBase, len(w.storeIDs), w.nStores); i > 0 {
		return w.generatedStore(i), true
	}
	return nil, false
}

// allStoreIDs lists every store id in numeric order.
func (w *world) allStoreIDs() []string {
	out := make([]string, 0, w.nStores)
	out = append(out, w.storeIDs...)
	for i := len(w.storeIDs) + 1; i <= w.nStores; i++ {
		out = append(out, strconv.Itoa(generatedStoreBase+i))
	}
	return out
}

// sku returns the catalogue entry with this code.
func (w *world) sku(code string) (*sku, bool) {
	if k, ok := w.skus[code]; ok {
		return k, true
	}
	if i := index(code, generatedSKUBase, len(w.skuCodes), w.nSKUs); i > 0 {
		return w.generatedSKU(i), true
	}
	return nil, false
}

// supplier returns the supplier with this id.
func (w *world) supplier(id string) (*supplier, bool) {
	if s, ok := w.suppliers[id]; ok {
		return s, true
	}
	digits, ok := strings.CutPrefix(id, generatedSupplierPrefix)
	if !ok || len(digits) != 4 {
		return nil, false
	}
	i, err := strconv.Atoi(digits)
	if err != nil || i < 1 || i > w.nSuppliers || fmt.Sprintf("%04d", i) != digits {
		return nil, false
	}
	return w.generatedSupplier(i), true
}

// A town of a generated store and its timezone.
type town struct{ name, zone string }

var towns = []town{
	{"Praha", "Europe/Prague"}, {"Brno", "Europe/Prague"}, {"Ostrava", "Europe/Prague"},
	{"Plzeň", "Europe/Prague"}, {"Liberec", "Europe/Prague"}, {"České Budějovice", "Europe/Prague"},
	{"Hradec Králové", "Europe/Prague"}, {"Pardubice", "Europe/Prague"}, {"Ústí nad Labem", "Europe/Prague"},
	{"Zlín", "Europe/Prague"}, {"Havířov", "Europe/Prague"}, {"Kladno", "Europe/Prague"},
	{"Most", "Europe/Prague"}, {"Opava", "Europe/Prague"}, {"Frýdek-Místek", "Europe/Prague"},
	{"Karviná", "Europe/Prague"}, {"Jihlava", "Europe/Prague"}, {"Teplice", "Europe/Prague"},
	{"Děčín", "Europe/Prague"}, {"Karlovy Vary", "Europe/Prague"}, {"Chomutov", "Europe/Prague"},
	{"Jablonec nad Nisou", "Europe/Prague"}, {"Mladá Boleslav", "Europe/Prague"}, {"Prostějov", "Europe/Prague"},
	{"Přerov", "Europe/Prague"}, {"Tábor", "Europe/Prague"},
	{"Bratislava", "Europe/Bratislava"}, {"Košice", "Europe/Bratislava"}, {"Žilina", "Europe/Bratislava"},
	{"Linz", "Europe/Vienna"}, {"Graz", "Europe/Vienna"},
}

// districts never make a fixture store's name with a town above.
var districts = []string{
	"Centrum", "Sever", "Jih", "Východ", "Západ", "Nádraží", "Náměstí", "Park",
	"Retail Park", "Sídliště", "Staré Město", "Nové Město", "Obchodní zóna", "Letiště", "U Nemocnice", "Výstaviště",
}

var (
	zoneMu sync.Mutex
	zones  = map[string]*time.Location{}
)

// zone loads a timezone once per process; loading is slow.
func zone(name string) *time.Location {
	zoneMu.Lock()
	defer zoneMu.Unlock()
	if loc, ok := zones[name]; ok {
		return loc
	}
	loc := mustLoad(name)
	zones[name] = loc
	return loc
}

// generatedStore derives the i-th store from the seed, with unique names.
func (w *world) generatedStore(i int) *store {
	id := strconv.Itoa(generatedStoreBase + i)
	pairs := len(towns) * len(districts)
	// 7 shares no factor with pairs (31 × 16), so i → j is a permutation
	// over any pairs consecutive indexes.
	j := (i*7 + w.nameOffset) % pairs
	tw, district := towns[j/len(districts)], districts[j%len(districts)]
	name := tw.name + " " + district
	if round := i / pairs; round > 0 {
		name += " " + strconv.Itoa(round+1)
	}
	r := w.rngFor("store", id)
	opens := []int{6 * 60, 7 * 60, 8 * 60}[r.intn(3)]
	closes := []int{20 * 60, 21 * 60, 22 * 60}[r.intn(3)]
	weekday := hours{open: opens, close: closes}
	sat := hours{open: opens + 60*r.intn(2), close: closes - 60*r.intn(3)}
	sun := closedDay
	if r.intn(6) > 0 {
		sun = hours{open: []int{8 * 60, 9 * 60}[r.intn(2)], close: []int{18 * 60, 20 * 60}[r.intn(2)]}
	}
	st := &store{id: id, name: name, loc: zone(tw.zone)}
	for d := time.Sunday; d <= time.Saturday; d++ {
		st.week[d] = weekday
	}
	st.week[time.Saturday], st.week[time.Sunday] = sat, sun
	return st
}

// A category of generated SKUs and how its products are sold.
type category struct {
	name      string
	products  []string
	unit      string
	chilled   bool
	shelfLife [2]int // days, inclusive range; {0, 0} = non-perishable
	casePacks []int64
}

var categories = []category{
	{"dairy", []string{"Butter", "Yogurt", "Kefir", "Cottage cheese", "Cream", "Gouda", "Mozzarella", "Quark"},
		"piece", true, [2]int{7, 40}, []int64{6, 10, 12, 20}},
	{"beverages", []string{"Cola", "Lemonade", "Mineral water", "Orange juice", "Iced tea", "Apple juice"},
		"piece", false, [2]int{90, 365}, []int64{6, 12, 24}},
	{"bakery", []string{"Rye bread", "Rolls", "Croissant", "Baguette", "Toast bread"},
		"piece", false, [2]int{1, 5}, []int64{10, 20, 30}},
	{"fruit and vegetables", []string{"Apples", "Bananas", "Tomatoes", "Potatoes", "Carrots", "Onions", "Cucumbers"},
		"kg", true, [2]int{3, 21}, []int64{5, 10, 15}},
	{"meat", []string{"Chicken breast", "Pork neck", "Minced beef", "Sausages", "Ham"},
		"kg", true, [2]int{3, 12}, []int64{4, 6, 10}},
	{"household", []string{"Dish soap", "Paper towels", "Laundry gel", "Trash bags", "Sponges"},
		"piece", false, [2]int{0, 0}, []int64{6, 12, 24}},
	{"pantry", []string{"Pasta", "Rice", "Flour", "Sugar", "Sunflower oil", "Canned beans", "Coffee"},
		"piece", false, [2]int{180, 720}, []int64{10, 12, 20}},
	{"frozen", []string{"Frozen peas", "Fish fingers", "Pizza", "Ice cream", "Spinach"},
		"piece", true, [2]int{90, 365}, []int64{8, 12, 16}},
}

var sizes = []string{"100g", "150g", "250g", "500g", "1kg", "0.5l", "1l", "1.5l", "2l", "4 pack", "family pack"}

var brands = []string{"Korral", "Horal", "Zlatá", "Bio Vita", "Tatra", "Pilos", "Alpa", "Dobrá", "Selská", "Hanácká"}

// generatedSKU derives the i-th SKU from the seed.
func (w *world) generatedSKU(i int) *sku {
	code := strconv.Itoa(generatedSKUBase + i)
	r := w.rngFor("sku", code)
	c := categories[r.intn(len(categories))]
	k := &sku{
		code:     code,
		name:     brands[r.intn(len(brands))] + " " + c.products[r.intn(len(c.products))] + " " + sizes[r.intn(len(sizes))],
		category: c.name,
		supplier: fmt.Sprintf("%s%04d", generatedSupplierPrefix, 1+r.intn(w.nSuppliers)),
		unit:     c.unit,
		casePack: c.casePacks[r.intn(len(c.casePacks))],
		chilled:  c.chilled,
	}
	if c.shelfLife[1] > 0 {
		k.shelfLifeDays = int64(c.shelfLife[0] + r.intn(c.shelfLife[1]-c.shelfLife[0]+1))
	}
	// Most products sell a few a day, some dozens, a few a hundred.
	switch p := r.intn(100); {
	case i%busyEvery == 0:
		k.usual = busyDailyUnits
	case p < 60:
		k.usual = 1 + r.intn(8)
	case p < 92:
		k.usual = 8 + r.intn(24)
	default:
		k.usual = 32 + r.intn(90)
	}
	return k
}

var supplierStems = []string{"Mlékárna", "Pekárna", "Nápoje", "Farma", "Masna", "Drogerie", "Potraviny", "Mrazírny", "Sady", "Pivovar"}

var supplierPlaces = []string{"Vysočina", "Haná", "Šumava", "Krkonoše", "Podřipsko", "Slovácko", "Chodsko", "Valašsko", "Polabí", "Posázaví"}

// generatedSupplier derives the i-th generated supplier from the seed.
func (w *world) generatedSupplier(i int) *supplier {
	id := fmt.Sprintf("%s%04d", generatedSupplierPrefix, i)
	r := w.rngFor("supplier", id)
	s := &supplier{
		id:           id,
		name:         fmt.Sprintf("%s %s %d s.r.o.", supplierStems[r.intn(len(supplierStems))], supplierPlaces[r.intn(len(supplierPlaces))], i),
		leadTimeDays: int64(1 + r.intn(5)),
	}
	if r.intn(2) == 0 {
		s.cutoff = []string{"10:00", "12:00", "14:00"}[r.intn(3)]
	}
	if r.intn(10) == 0 {
		s.minimumOrder = []int64{24, 48, 96}[r.intn(3)]
	}
	return s
}
