package e2e_test

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/korral/storelink/internal/e2etest"
	"github.com/korral/storelink/mockstorelink"
)

// longName is a contract-valid product name of 200 characters without a
// space, which a view must wrap rather than widen for.
var longName = strings.Repeat("Máslo", 40)

// flaggedDay is the day flags the views draw as flagged (risk.js FLAGGED).
var flaggedDay = []string{"closed", "zero_sales", "possible_stockout", "bulk_dominated", "no_history"}

// riskProbe reads each store panel of the stock risk view.
const riskProbe = `(() => {
	const panels = [...document.querySelectorAll("section.panel.store")];
	const look = (e) => { const s = getComputedStyle(e); return [s.color, s.backgroundColor, s.borderStyle].join(" "); };
	const all = (p, sel) => p.querySelectorAll(sel).length;
	return {
		ready: panels.length > 0 && [...document.querySelectorAll(".chart-slot")].every(s => s.querySelector("svg")),
		h1: document.querySelector("h1") ? document.querySelector("h1").textContent : "",
		panels: panels.map(p => {
			const h = p.querySelector(".headline"), proj = p.querySelector("svg.projection"), hist = p.querySelector("svg.history");
			return {
				name: p.querySelector(".store-name") ? p.querySelector(".store-name").textContent : "",
				first: p.querySelector("h2").nextElementSibling ? p.querySelector("h2").nextElementSibling.className : "",
				headline: h ? h.textContent : "", headlinePx: h ? parseFloat(getComputedStyle(h).fontSize) : 0,
				projectionFirst: !!proj && !!hist && !!(proj.compareDocumentPosition(hist) & Node.DOCUMENT_POSITION_FOLLOWING),
				windows: all(p, "svg.projection rect.window"), closes: all(p, "svg.projection line.close"),
				deliveries: all(p, "svg.projection line.delivery"), falls: all(p, "svg.projection polyline.fast"),
				bars: all(p, "svg.history rect.bar"), flagged: all(p, "svg.history rect.bar.flagged"), marks: all(p, "svg.history path.flag-mark"),
				flaggedPx: [...p.querySelectorAll("svg.history rect.bar.flagged")].map(b => b.getBoundingClientRect().height),
				notes: p.querySelector("ul.flags, .flags-none") ? p.querySelector("ul.flags, .flags-none").textContent : "",
				badges: [...p.querySelectorAll(".verdicts .badge")].map(b => b.className + " = " + look(b)),
				folded: !!p.querySelector("details.figures:not([open])"),
				text: p.textContent,
			};
		}),
		elements: document.querySelectorAll("img, b, iframe, object, embed").length,
	};
})()`

// checkRiskView: a panel per store leading with its headline in large type,
// then the projection (the stockout window when it falls today, the close,
// the delivery), the history beneath with a bar per evidence day, and the
// figures folded away. At viewsClock store 47 runs out before the close
// and store 102 lasts: two verdicts, in two styles.
func (v *viewsWorld) checkRiskView() {
	t := v.t
	risk := v.show("risk", riskProbe)
	stores, _ := v.cases["risk"].data(t)["stores"].([]any)
	panels, _ := risk["panels"].([]any)
	if len(panels) != 2 || len(stores) != 2 {
		t.Fatalf("risk view at %d px: %d panels for %d stores: %v", v.width, len(panels), len(stores), risk)
	}
	var looks []string
	for i, s := range stores {
		r := s.(map[string]any)["risk"].(map[string]any)
		p := panels[i].(map[string]any)
		v.checkHeadline(fmt.Sprintf("risk panel %d", i), r, p)
		rows := len(r["evidence"].(map[string]any)["rows"].([]any))
		if int(num(p["bars"])) != rows || rows == 0 || p["projectionFirst"] != true {
			t.Errorf("panel %d: %v history bars for %d evidence days; projection above the history: %v", i, p["bars"], rows, p["projectionFirst"])
		}
		want := map[string]float64{"deliveries": 1, "falls": 1}
		if openNow(r) {
			// Before the close the chart ends at the close; the band is today's.
			want["closes"], want["windows"] = 1, 0
			if stockoutToday(r) {
				want["windows"] = 1
			}
		}
		for part, n := range want {
			if num(p[part]) != n {
				t.Errorf("panel %d at %d px: %v %s in the projection, want %v", i, v.width, p[part], part, n)
			}
		}
		if !strings.Contains(p["text"].(string), r["caveat"].(string)) || p["folded"] != true {
			t.Errorf("panel %d: caveat shown %v, figures folded %v", i, strings.Contains(p["text"].(string), r["caveat"].(string)), p["folded"])
		}
		looks = append(looks, fmt.Sprint(p["badges"].([]any)[0]))
	}
	// Two stores with different answers show them in two styles.
	class0, look0, _ := strings.Cut(looks[0], " = ")
	class1, look1, _ := strings.Cut(looks[1], " = ")
	if (class0 == class1) != (look0 == look1) {
		t.Errorf("the stockout verdicts' styles: %q", looks)
	}
	if stores[0].(map[string]any)["risk"].(map[string]any)["will_stockout_before_close_today"] != "true" || class0 == class1 {
		t.Errorf("at %s, want store 47 at risk and 102 not, in two styles: %q", viewsClock, looks)
	}
}

// checkHostileNames: in the hostile world, store 47's name is shown as the
// markup it is, as text, and a 200-character product name wraps in the
// stock risk view's heading; both views are readable (show).
func (v *viewsWorld) checkHostileNames() {
	t := v.t
	risk := v.show("hostile-risk", riskProbe)
	panels, _ := risk["panels"].([]any)
	if len(panels) != 2 {
		t.Fatalf("hostile risk view at %d px: %d panels", v.width, len(panels))
	}
	if got := panels[0].(map[string]any)["name"]; got != hostileName {
		t.Errorf("store 47's name reads %q, want the markup as text %q", got, hostileName)
	}
	if n := num(risk["elements"]); n != 0 {
		t.Errorf("the risk view holds %v img/b/iframe/object/embed elements: a name was parsed as markup", n)
	}
	r := v.cases["hostile-risk"].data(t)["stores"].([]any)[0].(map[string]any)["risk"].(map[string]any)
	v.checkHeadline("hostile risk panel", r, panels[0].(map[string]any))
	long := v.show("hostile-long", riskProbe)
	if !strings.Contains(long["h1"].(string), longName) {
		t.Errorf("at %d px the heading reads %q, want the 200-character name whole", v.width, long["h1"])
	}
}

// stockoutToday reports whether a risk's stockout window starts today by
// the close, where the projection draws it as a band.
func stockoutToday(r map[string]any) bool {
	win, _ := r["stockout_window"].([]any)
	lo, _ := win[0].(string)
	asOf, _ := r["as_of"].(string)
	closes, _ := r["closes_at_today"].(string)
	return len(lo) >= 16 && len(asOf) >= 10 && lo[:10] == asOf[:10] && closes != "" && lo[11:16] <= closes
}

// openNow reports whether the store is before today's close at as_of.
func openNow(r map[string]any) bool {
	asOf, _ := r["as_of"].(string)
	closes, _ := r["closes_at_today"].(string)
	return len(asOf) >= 16 && closes != "" && asOf[11:16] < closes
}

// checkOneStore: one store's panel leads with its headline.
func (v *viewsWorld) checkOneStore() {
	got := v.show("one", riskProbe)
	panels, _ := got["panels"].([]any)
	if len(panels) != 1 {
		v.t.Fatalf("one store at %d px: %d panels", v.width, len(panels))
	}
	r := v.cases["one"].data(v.t)["stores"].([]any)[0].(map[string]any)["risk"].(map[string]any)
	v.checkHeadline("one store", r, panels[0].(map[string]any))
}

// checkHeadline: the panel's first line is the answer's headline (when the
// answer carries one), in type of at least 18 px.
func (v *viewsWorld) checkHeadline(what string, r, p map[string]any) {
	t := v.t
	t.Helper()
	got, _ := p["headline"].(string)
	if want, ok := r["headline"].(string); ok && got != want || got == "" {
		t.Errorf("%s at %d px: headline %q, answer's headline %q", what, v.width, got, r["headline"])
	}
	if !strings.Contains(fmt.Sprint(p["first"]), "headline") || num(p["headlinePx"]) < 18 {
		t.Errorf("%s at %d px: the line after the name is %q at %v px, want the headline at 18 px or more", what, v.width, p["first"], p["headlinePx"])
	}
}

// flaggedDays counts a risk's evidence days with a flag the views draw.
func flaggedDays(r map[string]any) int {
	ev := r["evidence"].(map[string]any)
	iFlags := slices.Index(ev["columns"].([]any), any("flags"))
	flagged := 0
	for _, row := range ev["rows"].([]any) {
		cells := row.([]any)
		if iFlags < 0 || iFlags >= len(cells) {
			continue
		}
		for _, f := range asList(cells[iFlags]) {
			if slices.Contains(flaggedDay, f.(string)) {
				flagged++
				break
			}
		}
	}
	return flagged
}

// checkFlaggedDays: at the store where a steady seller had whole days of no
// sales, each flagged day is drawn (a bar of at least 3 px and a mark) and
// the flags are named in words, not ids.
func (v *viewsWorld) checkFlaggedDays() {
	t := v.t
	got := v.show("flagged", riskProbe)
	r := v.cases["flagged"].data(t)["stores"].([]any)[0].(map[string]any)["risk"].(map[string]any)
	flagged := flaggedDays(r)
	p := got["panels"].([]any)[0].(map[string]any)
	v.checkHeadline("flagged days", r, p)
	if flagged == 0 || int(num(p["flagged"])) != flagged || int(num(p["marks"])) != flagged {
		t.Errorf("at %d px: %d flagged evidence days, %v flagged bars, %v marks", v.width, flagged, p["flagged"], p["marks"])
	}
	for _, h := range p["flaggedPx"].([]any) {
		if num(h) < 3 {
			t.Errorf("at %d px: a flagged day's bar is %v px tall", v.width, h)
		}
	}
	notes := p["notes"].(string)
	for _, f := range r["data_quality_flags"].([]any) {
		if strings.Contains(notes, f.(string)) {
			t.Errorf("the flag %q is shown as its id: %q", f, notes)
		}
	}
	for _, n := range asList(r["data_quality_notes"]) {
		if s, ok := n.(string); ok && !strings.Contains(notes, s) {
			t.Errorf("the note %q is not shown: %q", s, notes)
		}
	}
	if !strings.Contains(notes, "Flagged days") || !strings.Contains(notes, "possibly out of stock") {
		t.Errorf("at %d px: notes %q, want the flagged days in words", v.width, notes)
	}
}

func asList(v any) []any { l, _ := v.([]any); return l }

// checkSweepView: the chain's counts in words above one panel per store
// at risk, whose flagged days are drawn. At viewsClock over 28 days store
// 47 runs out before the close and 102 lasts; 47's oldest day lies before
// StoreLink's history.
func (v *viewsWorld) checkSweepView() {
	t := v.t
	swept := v.show("sweep", `(() => {
		const s = document.querySelector("section.sweep");
		const panels = document.querySelectorAll("section.panel.store");
		const all = (sel) => document.querySelectorAll("section.panel.store " + sel).length;
		return { ready: !!s && [...document.querySelectorAll(".chart-slot")].every(s => s.querySelector("svg")),
			text: s ? s.textContent : "", tone: s ? s.querySelector(".headline").className : "", panels: panels.length,
			headline: panels.length ? panels[0].querySelector(".headline").textContent : "",
			bars: all("svg.history rect.bar"), flagged: all("svg.history rect.bar.flagged"), marks: all("svg.history path.flag-mark") };
	})()`)
	sweepData := v.cases["sweep"].data(t)
	detailed, _ := sweepData["stores"].([]any)
	outcomes := sweepData["sweep"].(map[string]any)["outcomes"].(map[string]any)
	text, _ := swept["text"].(string)
	for _, want := range []string{"Chain sweep: 2 stores checked", "1 runs out before close, 1 lasts until close.", "Below: the store most at risk."} {
		if !strings.Contains(text, want) {
			t.Errorf("sweep view at %d px: the chain panel reads %q, want %q", v.width, text, want)
		}
	}
	if num(outcomes["stockout_before_close"]) != 1 || len(detailed) != 1 || num(swept["panels"]) != 1 || num(swept["bars"]) != 28 {
		t.Fatalf("sweep at %s: outcomes %v, %d detailed stores, %v panels with %v bars", viewsClock, outcomes, len(detailed), swept["panels"], swept["bars"])
	}
	r := detailed[0].(map[string]any)["risk"].(map[string]any)
	if n := flaggedDays(r); n == 0 || int(num(swept["flagged"])) != n || int(num(swept["marks"])) != n {
		t.Errorf("sweep view at %d px: %d flagged evidence days, %v flagged bars, %v marks", v.width, n, swept["flagged"], swept["marks"])
	}
	if swept["headline"] != r["headline"] || !strings.Contains(swept["tone"].(string), "tone-bad") {
		t.Errorf("sweep view at %d px: store headline %q (answer's %q), chain tone %q", v.width, swept["headline"], r["headline"], swept["tone"])
	}
}

// orderProbe reads the order view's parts.
const orderProbe = `(() => {
		const q = s => document.querySelector(s);
		const look = (e) => { const s = getComputedStyle(e); return [s.color, s.backgroundColor, s.borderStyle].join(" "); };
		const key = q(".idempotency-key");
		return {
			ready: !!q("h1"),
			mode: q("h1") ? q("h1").textContent : "",
			order: q(".order") ? q(".order").textContent : "",
			verdict: q(".quantity-check .verdict") ? q(".quantity-check .verdict").className + " = " + q(".quantity-check .verdict").textContent : "",
			look: q(".quantity-check .verdict") ? look(q(".quantity-check .verdict")) : "",
			justification: q(".justification") ? q(".justification").textContent : "",
			open: q(".open-orders") ? q(".open-orders").textContent : "",
			approval: q(".approval") ? q(".approval").textContent : "",
			keyFolded: !!key && !!key.closest("details:not([open])"),
			text: document.body.innerText,
			buttons: document.querySelectorAll("button, form, input").length,
		};
	})()`

// verdictOrders are orders whose preview gives each quantity check
// verdict, first the likeliest at viewsClock: 13 units are no whole number
// of cases of 12 (review at any hour); 12 units of the minimum-order SKU
// are below the supplier's minimum of 48 (refuse at any hour).
func verdictOrders() map[string][]map[string]any {
	return map[string][]map[string]any{
		"ok":     {e2etest.Order(96), e2etest.Order(48), e2etest.Order(120), e2etest.Order(72)},
		"review": {e2etest.Order(24), e2etest.Order(13)},
		"refuse": {e2etest.Order(12, "sku", mockstorelink.SKUMinimumOrder)},
	}
}

// verdictCase is the first of the orders whose preview says verdict.
func (h *appsHostSession) verdictCase(verdict string, orders []map[string]any) *viewCase {
	var seen []any
	for _, args := range orders {
		c := h.viewCase("korral_raise_replenishment_order", args)
		got := c.data(h.t)["quantity_check"].(map[string]any)["verdict"]
		if got == verdict {
			return c
		}
		seen = append(seen, got)
	}
	h.t.Fatalf("no order previews as %s: %v", verdict, seen)
	return nil
}

// checkOrderView: the preview as the buyer reads it, with neither the
// request's body nor the words meant for the model, the key folded away,
// and no action offered.
func (v *viewsWorld) checkOrderView() {
	t := v.t
	order := v.show("order", orderProbe)
	preview := v.cases["order"].data(t)
	qc := preview["quantity_check"].(map[string]any)
	cover := preview["justification"].(map[string]any)["days_of_cover_after_delivery"].(map[string]any)
	for field, want := range map[string]string{
		"mode":          "Preview: nothing was sent",
		"order":         "24 units",
		"verdict":       "verdict-" + qc["verdict"].(string),
		"justification": fmt.Sprintf("%v to %v days", cover["low"], cover["high"]),
		"open":          "none",
	} {
		if !strings.Contains(order[field].(string), want) {
			t.Errorf("order view at %d px: %s reads %q, want %q in it", v.width, field, order[field], want)
		}
	}
	text := order["text"].(string)
	for _, model := range []string{preview["next_step"].(string), "confirm:true", "quantity_units", "POST ", "Tell the", "/v1/stores"} {
		if strings.Contains(text, model) {
			t.Errorf("order view shows %q, meant for the model or StoreLink: %q", model, text)
		}
	}
	if order["keyFolded"] != true || !strings.Contains(order["order"].(string), "store 47") {
		t.Errorf("order view: idempotency key folded %v; order reads %q", order["keyFolded"], order["order"])
	}
	if n := num(order["buttons"]); n != 0 {
		t.Errorf("order view: %v buttons, forms or inputs; a view offers no action", n)
	}
}

// checkVerdictStyles: each quantity check verdict is shown in words with a
// style of its own, and refuse, the harshest, is filled.
func (v *viewsWorld) checkVerdictStyles() {
	t := v.t
	looks := map[string]string{}
	for _, verdict := range slices.Sorted(maps.Keys(verdictOrders())) {
		name := "order-" + verdict
		order := v.show(name, orderProbe)
		if !strings.Contains(order["verdict"].(string), "verdict-"+verdict) {
			t.Errorf("%s: verdict badge %q", name, order["verdict"])
		}
		looks[verdict] = order["look"].(string)
	}
	if looks["ok"] == looks["review"] || looks["review"] == looks["refuse"] || looks["ok"] == looks["refuse"] ||
		strings.Contains(looks["refuse"], "rgba(0, 0, 0, 0)") {
		t.Errorf("at %d px the verdicts look %q", v.width, looks)
	}
}

// checkLongNames: an order for a product with a 200-character name wraps.
func (v *viewsWorld) checkLongNames() {
	got := v.show("hostile-order-long", orderProbe)
	if !strings.Contains(got["order"].(string), longName) {
		v.t.Errorf("the long name is not shown whole: %q", got["order"])
	}
}

// checkHostTheme: the view takes the host's theme and style variables.
func (v *viewsWorld) checkHostTheme() {
	c := *v.cases["risk"]
	c.HostCtx = map[string]any{"theme": "dark", "styles": map[string]any{"variables": map[string]any{
		"--color-background-primary": "rgb(20, 22, 25)", "--color-text-primary": "rgb(230, 231, 232)", "--font-sans": "serif",
	}}}
	v.cases["theme"] = &c
	got := v.show("theme", `(() => { const s = getComputedStyle(document.body);
		return { ready: !!document.querySelector("section.panel"), theme: document.documentElement.dataset.theme,
			look: [s.backgroundColor, s.color, s.fontFamily].join(" / ") }; })()`)
	if got["theme"] != "dark" || got["look"] != "rgb(20, 22, 25) / rgb(230, 231, 232) / serif" {
		v.t.Errorf("with the host's theme: data-theme %v, body %v", got["theme"], got["look"])
	}
}

// frameShot is a picture of the view's frame, at the best compression.
// Chromium paints a frame of another process a little after its document
// is ready: a picture of a single colour is taken again, a while later.
func frameShot(t *testing.T, bctx context.Context, what string) []byte {
	t.Helper()
	var img image.Image
	for try := 0; ; try++ {
		b, err := chromedp.Run(bctx, chromedp.Screenshot(chromedp.CSS("#frame iframe")))
		if err != nil {
			t.Fatalf("screenshot %s: %v", what, err)
		}
		if img, err = png.Decode(bytes.NewReader(b)); err != nil {
			t.Fatal(err)
		}
		if painted(img) || try == 20 {
			break
		}
		time.Sleep(250 * time.Millisecond)
	}
	var out bytes.Buffer
	if err := (&png.Encoder{CompressionLevel: png.BestCompression}).Encode(&out, img); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

// painted reports whether a picture holds some text: pixels of more than a
// handful of colours along its rows.
func painted(img image.Image) bool {
	seen := map[color.RGBA]bool{}
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y += 7 {
		for x := b.Min.X; x < b.Max.X; x += 3 {
			r, g, bl, a := img.At(x, y).RGBA()
			seen[color.RGBA{uint8(r >> 8), uint8(g >> 8), uint8(bl >> 8), uint8(a >> 8)}] = true
			if len(seen) > 16 {
				return true
			}
		}
	}
	return false
}
