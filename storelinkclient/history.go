package storelinkclient

import "time"

// HistoryDays is how far back StoreLink keeps point-of-sale transactions, in
// whole 24-hour periods before now (the contract's listPOSTransactions says
// so). A sale older than now − HistoryDays × 24 h is gone, so a caller must
// not read a quiet day out of the time before [HistoryStart].
const HistoryDays = 28

// HistoryStart is the oldest instant StoreLink's point-of-sale history
// covers at now.
func HistoryStart(now time.Time) time.Time {
	return now.Add(-HistoryDays * 24 * time.Hour)
}
