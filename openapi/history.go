package openapi

import "time"

// HistoryDays is how far back StoreLink keeps point-of-sale transactions, in
// whole 24-hour periods before now: the figure listPOSTransactions documents
// in the contract (a test pins the two together). storelinkclient, which
// imports no module of ours, carries the same figure for its importers, and
// a test at the repository root pins that copy to this one.
const HistoryDays = 28

// HistoryStart is the oldest instant the point-of-sale history covers at now.
func HistoryStart(now time.Time) time.Time {
	return now.Add(-HistoryDays * 24 * time.Hour)
}
