package console

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
)

// chart is the geometry of the order page's SVG sales chart: one bar per
// evidence row, then the days ahead with the stockout window shaded and
// the delivery marked. The y axis is units.
type chart struct {
	Width, Height            float64
	Left, Right, Top, Bottom float64
	Title, Desc              string
	Bars                     []chartBar
	// Flagged is true when a bar is drawn as a flagged day.
	Flagged bool
	YTicks  []chartTick
	XTicks  []chartTick
	OnHand  chartLine
	// Today is the x where the days ahead begin; zero when none.
	Today    float64
	Window   *chartSpan
	Delivery *chartMark
}

type chartBar struct {
	X, Y, W, H float64
	Flagged    bool
	Title      string
}

type chartTick struct {
	Pos   float64
	Label string
}

type chartLine struct {
	Y     float64
	Label string
}

type chartSpan struct {
	X, W  float64
	Label string
	// LabelX and LabelY place the "stockout" label, clear of the delivery's.
	LabelX, LabelY float64
}

type chartMark struct {
	X     float64
	Label string
}

// Chart layout in SVG user units; the CSS scales it to the page width.
const (
	chartWidth  = 720
	chartHeight = 300
	marginLeft  = 56
	marginRight = 16
	marginTop   = 28
	marginBot   = 56
	// maxAheadDays caps the days ahead drawn.
	maxAheadDays = 14
)

// flaggedDay lists the day flags a bar is highlighted for.
var flaggedDay = []string{"closed", "zero_sales", "possible_stockout", "bulk_dominated", "no_history"}

// isFlaggedDay reports whether f, as an id or in words (flagWords), is
// one of flaggedDay.
func isFlaggedDay(f string) bool {
	return slices.Contains(flaggedDay, f) || slices.Contains(flagWords(flaggedDay), f)
}

// buildChart lays out the chart of d, or returns nil when there is no
// evidence to draw.
func buildChart(d OrderDetail) *chart {
	n := len(d.Evidence)
	if n == 0 {
		return nil
	}
	j := d.Justification
	c := &chart{
		Width: chartWidth, Height: chartHeight,
		Left: marginLeft, Right: chartWidth - marginRight,
		Top: marginTop, Bottom: chartHeight - marginBot,
	}

	// The days ahead end at the later of the window's end and the delivery.
	base, baseOK := parseDay(d.Evidence[0].Date)
	slots := float64(n)
	offset := func(t time.Time) (float64, bool) {
		if !baseOK || t.IsZero() {
			return 0, false
		}
		y, m, dd := t.Date()
		day := time.Date(y, m, dd, 0, 0, 0, 0, time.UTC)
		return day.Sub(base).Hours()/24 + float64(t.Hour()*60+t.Minute())/1440, true
	}
	for _, t := range []time.Time{j.StockoutLatest, j.EarliestDelivery} {
		if o, ok := offset(t); ok {
			slots = math.Max(slots, math.Min(math.Ceil(o+1e-9), float64(n+maxAheadDays)))
		}
	}
	slot := (c.Right - c.Left) / slots
	xAt := func(o float64) float64 {
		return c.Left + math.Max(0, math.Min(o, slots))*slot
	}

	maxUnits := int64(0)
	for _, e := range d.Evidence {
		maxUnits = max(maxUnits, e.UnitsSold)
	}
	top, step := niceScale(float64(max(maxUnits, j.OnHandUnits, 1)))
	yAt := func(v float64) float64 {
		return c.Bottom - math.Max(0, v)/top*(c.Bottom-c.Top)
	}
	for v := 0.0; v <= top+step/2; v += step {
		c.YTicks = append(c.YTicks, chartTick{Pos: yAt(v), Label: fmt.Sprintf("%g", v)})
	}

	busiest := c.addDays(d.Evidence, slot, yAt)
	c.Flagged = slices.ContainsFunc(c.Bars, func(b chartBar) bool { return b.Flagged })
	if slots > float64(n) {
		c.Today = xAt(float64(n))
	}

	c.OnHand = chartLine{Y: yAt(float64(j.OnHandUnits)), Label: fmt.Sprintf("on hand %d", j.OnHandUnits)}

	window := "no projected stockout window"
	if lo, ok := offset(j.StockoutEarliest); ok {
		hi, _ := offset(j.StockoutLatest)
		hi = math.Max(hi, lo)
		x0, x1 := xAt(lo), xAt(hi)
		window = fmt.Sprintf("projected stockout between %s and %s", when(j.StockoutEarliest), when(j.StockoutLatest))
		w := math.Max(x1-x0, 3)
		c.Window = &chartSpan{X: x0, W: w, Label: window, LabelX: x0 + w/2, LabelY: c.Top - 8}
	}
	if o, ok := offset(j.EarliestDelivery); ok {
		c.Delivery = &chartMark{X: xAt(o), Label: "earliest delivery " + when(j.EarliestDelivery)}
		if c.Window != nil && math.Abs(c.Delivery.X-c.Window.LabelX) < 64 {
			c.Window.LabelY = c.Top - 22
		}
	}

	first, last := d.Evidence[0].Date, d.Evidence[n-1].Date
	c.Title = fmt.Sprintf("Units of %s sold per day at %s, %s to %s; on hand today %d; %s.",
		d.ProductName, storeLabel(d.OrderSummary), first, last, j.OnHandUnits, window)
	c.Desc = fmt.Sprintf("%d bars, one per day. The busiest day was %s with %s. "+
		"The dashed line is today's on-hand; the shaded band is the projected stockout window.",
		n, busiest.Date, plural(busiest.UnitsSold, "unit", "units"))
	return c
}

// addDays adds a bar per row and a date label every few days (counted back
// from today). It returns the busiest day.
func (c *chart) addDays(days []EvidenceDay, slot float64, yAt func(float64) float64) EvidenceDay {
	n := len(days)
	every := (n + 6) / 7
	busiest := days[0]
	for i, e := range days {
		y := yAt(float64(e.UnitsSold))
		title := fmt.Sprintf("%s: %s sold", e.Date, plural(e.UnitsSold, "unit", "units"))
		if len(e.Flags) > 0 {
			title += " (" + strings.Join(e.Flags, ", ") + ")"
		}
		c.Bars = append(c.Bars, chartBar{
			X: c.Left + float64(i)*slot + slot*0.15, W: slot * 0.7,
			Y: y, H: c.Bottom - y,
			Flagged: slices.ContainsFunc(e.Flags, isFlaggedDay),
			Title:   title,
		})
		if (n-1-i)%every == 0 {
			label := e.Date
			if len(label) == len("2006-01-02") {
				label = label[5:]
			}
			c.XTicks = append(c.XTicks, chartTick{Pos: c.Left + (float64(i)+0.5)*slot, Label: label})
		}
		if e.UnitsSold > busiest.UnitsSold {
			busiest = e
		}
	}
	return busiest
}

// niceScale returns the axis top and tick step (1, 2 or 5 × 10^n) for v.
func niceScale(v float64) (top, step float64) {
	raw := v / 4
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	step = mag
	for _, m := range []float64{1, 2, 5, 10} {
		if m*mag >= raw {
			step = m * mag
			break
		}
	}
	if step < 1 {
		step = 1
	}
	return math.Ceil(v/step) * step, step
}

func parseDay(s string) (time.Time, bool) {
	t, err := time.Parse("2006-01-02", s)
	return t, err == nil
}

func storeLabel(o OrderSummary) string {
	if o.StoreName == "" {
		return "store " + o.StoreID
	}
	return fmt.Sprintf("%s (store %s)", o.StoreName, o.StoreID)
}
