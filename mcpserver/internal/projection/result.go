package projection

import "math"

// Confidence grades a projection by the explicit rules in ADR 0004.
type Confidence string

// Confidence levels, best first.
const (
	ConfidenceHigh   Confidence = "high"
	ConfidenceMedium Confidence = "medium"
	ConfidenceLow    Confidence = "low"
	// ConfidenceNone: the projection declined; every yes/no is "unknown".
	ConfidenceNone Confidence = "none"
)

// Confidences returns every Confidence, best first, for schema enums.
func Confidences() []Confidence {
	return []Confidence{ConfidenceHigh, ConfidenceMedium, ConfidenceLow, ConfidenceNone}
}

// Answer is a three-valued yes/no, a string so that "unknown" is explicit.
type Answer string

// Answers.
const (
	Yes     Answer = "true"
	No      Answer = "false"
	Unknown Answer = "unknown"
)

// Answers returns every Answer, for schema enums.
func Answers() []Answer { return []Answer{Yes, No, Unknown} }

// Flag is a data-quality flag from the closed set below.
type Flag string

// The closed set of data-quality flags (thresholds in ADR 0004).
const (
	// FlagInsufficientHistory: fewer than MinBasisDays usable trading days.
	FlagInsufficientHistory Flag = "insufficient_history"
	// FlagNoSalesInWindow: no units sold in the window outside bulk transactions.
	FlagNoSalesInWindow Flag = "no_sales_in_window"
	// FlagBulkDominatesDay: on some day, bulk made at least half the units.
	FlagBulkDominatesDay Flag = "bulk_transaction_dominates_day"
	// FlagPossibleStockoutDays: zero-sale days where sales were expected.
	FlagPossibleStockoutDays Flag = "possible_stockout_days"
	// FlagHighVariability: the daily rates' CV is above MaxSteadyCV.
	FlagHighVariability Flag = "high_variability"
	// FlagStaleOnHandCount: the on-hand count is older than StaleCountHours.
	FlagStaleOnHandCount Flag = "stale_on_hand_count"
	// FlagNegativeOnHand: StoreLink's on-hand figure is below zero.
	FlagNegativeOnHand Flag = "negative_on_hand"
	// FlagStoreClosedToday: the store does not open today.
	FlagStoreClosedToday Flag = "store_closed_today"
	// FlagOutsideTradingHours: the store opens today but is not open now.
	FlagOutsideTradingHours Flag = "outside_trading_hours"
)

// Flags returns the closed set in the order flags are reported.
func Flags() []Flag {
	return []Flag{
		FlagInsufficientHistory, FlagNoSalesInWindow, FlagBulkDominatesDay, FlagPossibleStockoutDays,
		FlagHighVariability, FlagStaleOnHandCount, FlagNegativeOnHand, FlagStoreClosedToday, FlagOutsideTradingHours,
	}
}

// DayFlag marks one evidence row.
type DayFlag string

// Day flags.
const (
	DayClosed           DayFlag = "closed"
	DayZeroSales        DayFlag = "zero_sales"
	DayPossibleStockout DayFlag = "possible_stockout"
	DayBulkDominated    DayFlag = "bulk_dominated"
	// DayNoHistory: before the first sale or the history start; not used.
	DayNoHistory DayFlag = "no_history"
)

// DayFlags returns every DayFlag, for schema enums.
func DayFlags() []DayFlag {
	return []DayFlag{DayClosed, DayZeroSales, DayPossibleStockout, DayBulkDominated, DayNoHistory}
}

// Band is a sell-rate interval in units per trading hour.
type Band struct {
	Low  float64 `json:"low" jsonschema:"Lower end of the sell rate: the 25th percentile of the daily rates."`
	High float64 `json:"high" jsonschema:"Upper end of the sell rate: the 75th percentile of the daily rates."`
}

// Window is when the SKU is projected to run out (RFC 3339, store offset);
// a null end lies beyond the horizon or there is no projection.
type Window struct {
	Earliest *string `json:"earliest" jsonschema:"Earliest stockout, at the high sell rate; null when not within horizon_days or not projected."`
	Latest   *string `json:"latest" jsonschema:"Latest stockout, at the low sell rate; null when not within horizon_days or not projected."`
}

// DayEvidence is one local calendar day of the observation window.
type DayEvidence struct {
	Date         string    `json:"date" jsonschema:"Store-local date, YYYY-MM-DD."`
	Weekday      string    `json:"weekday" jsonschema:"Three-letter weekday, e.g. Mon."`
	UnitsSold    int64     `json:"units_sold" jsonschema:"Units sold that day, bulk transactions included."`
	Transactions int       `json:"transactions" jsonschema:"Number of POS transactions that day."`
	BulkUnits    int64     `json:"bulk_units" jsonschema:"Units in bulk transactions, left out of the sell rate."`
	TradingHours float64   `json:"trading_hours" jsonschema:"Hours the store traded that day (DST-aware; 0 when closed)."`
	UnitsPerHour *float64  `json:"units_per_trading_hour" jsonschema:"(units_sold - bulk_units) / trading_hours; null on a closed or no_history day."`
	UsedInBand   bool      `json:"used_in_band" jsonschema:"Whether this day's rate entered the sell-rate band (false everywhere when there is no band)."`
	Flags        []DayFlag `json:"flags" jsonschema:"Any of: closed, zero_sales, possible_stockout, bulk_dominated, no_history (before the first sale or StoreLink's history)."`
}

// Result is the projection: RFC 3339 times with the store's offset, units.
type Result struct {
	AsOf     string `json:"as_of" jsonschema:"The moment the projection was computed, in store-local time."`
	Timezone string `json:"timezone" jsonschema:"The store's IANA timezone."`

	OnHandUnits         int64   `json:"on_hand_units" jsonschema:"On-hand units in StoreLink's last count (may be negative)."`
	OnHandAsOf          string  `json:"on_hand_as_of" jsonschema:"When that count was taken; empty when StoreLink gave no time."`
	OnHandAgeHours      float64 `json:"on_hand_age_hours" jsonschema:"Hours between the count and as_of."`
	UnitsSoldSinceCount int64   `json:"units_sold_since_count" jsonschema:"Units sold after the count, up to as_of."`
	EstimatedOnHandNow  int64   `json:"estimated_on_hand_now" jsonschema:"on_hand_units minus units_sold_since_count: the stock the projection consumes."`
	UnitsSoldToday      int64   `json:"units_sold_today" jsonschema:"Units sold since local midnight today."`

	UnitsPerTradingHour  *Band   `json:"units_per_trading_hour" jsonschema:"Sell-rate band in units per trading hour; null when the projection refused to guess."`
	VelocityBasis        string  `json:"velocity_basis" jsonschema:"One sentence on how the sell rate was computed."`
	ObservationDays      int     `json:"observation_days" jsonschema:"Calendar days in the lookback window (complete days before today)."`
	TradingDaysUsed      int     `json:"trading_days_used" jsonschema:"Usable trading days: open, and not a possible stockout. They form the band when there is one."`
	TradingHoursObserved float64 `json:"trading_hours_observed" jsonschema:"Trading hours of those days."`
	TradingHoursPerDay   float64 `json:"trading_hours_per_day" jsonschema:"The weekly schedule's average trading hours per calendar day."`

	ProjectedStockoutWindow      Window     `json:"projected_stockout_window" jsonschema:"When the SKU is projected to run out."`
	HorizonDays                  int        `json:"horizon_days" jsonschema:"How many days ahead the projection looks."`
	Confidence                   Confidence `json:"confidence" jsonschema:"high, medium, low or none (refused to guess)."`
	WillStockoutBeforeCloseToday Answer     `json:"will_stockout_before_close_today" jsonschema:"true, false or unknown."`
	UnitsShortByClose            *int64     `json:"units_short_by_close" jsonschema:"Units missing to meet demand at the high rate until today's close; null when not projected."`
	TradingHoursLeftToday        float64    `json:"trading_hours_left_today" jsonschema:"Trading hours between as_of and today's close."`
	StoreOpenNow                 bool       `json:"store_open_now" jsonschema:"Whether the store is trading at as_of."`
	OpensAtToday                 *string    `json:"opens_at_today" jsonschema:"Today's opening time; null when closed today."`
	ClosesAtToday                *string    `json:"closes_at_today" jsonschema:"Today's closing time; null when closed today."`

	SupplierLeadTimeDays         *int    `json:"supplier_lead_time_days" jsonschema:"Supplier lead time in days; null when unknown."`
	OrderCutoffPassed            bool    `json:"order_cutoff_passed" jsonschema:"Whether today's supplier order cut-off has passed, so an order counts from tomorrow."`
	EarliestReplenishmentArrival *string `json:"earliest_replenishment_arrival" jsonschema:"Opening time of the first trading day a delivery ordered now could arrive; null when unknown."`
	ArrivalBeatsStockout         Answer  `json:"arrival_beats_stockout" jsonschema:"Whether that delivery lands before the earliest stockout: true, false or unknown."`

	Evidence         []DayEvidence `json:"evidence" jsonschema:"One row per day of the observation window, oldest first (at most 28)."`
	DataQualityFlags []Flag        `json:"data_quality_flags" jsonschema:"Data-quality flags from a closed set; empty when none apply."`
	Caveat           string        `json:"caveat" jsonschema:"One sentence the answer should carry with it."`
}

// DaysOfCover returns how many calendar days units would last at the band,
// at the average trading hours per day. ok is false without a band, without
// trading, or with a zero low rate.
func (r Result) DaysOfCover(units int64) (low, high float64, ok bool) {
	if r.UnitsPerTradingHour == nil || r.TradingHoursPerDay <= 0 || r.UnitsPerTradingHour.Low <= 0 {
		return 0, 0, false
	}
	u := math.Max(0, float64(units))
	low = u / (r.UnitsPerTradingHour.High * r.TradingHoursPerDay)
	high = u / (r.UnitsPerTradingHour.Low * r.TradingHoursPerDay)
	return low, high, true
}
