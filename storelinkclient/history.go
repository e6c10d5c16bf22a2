package storelinkclient

import "time"

// HistoryDays is how far back StoreLink keeps POS transactions, in 24-hour
// periods before now; do not read a quiet day before [HistoryStart].
const HistoryDays = 28

// HistoryStart is the oldest instant StoreLink's point-of-sale history
// covers at now.
func HistoryStart(now time.Time) time.Time {
	return now.Add(-HistoryDays * 24 * time.Hour)
}
