package openapi

import "time"

// HistoryDays is how far back StoreLink keeps POS transactions, in 24-hour
// periods before now, as the contract documents; tests pin it to the
// contract and to storelinkclient's copy.
const HistoryDays = 28

// HistoryStart is the oldest instant the point-of-sale history covers at now.
func HistoryStart(now time.Time) time.Time {
	return now.Add(-HistoryDays * 24 * time.Hour)
}
