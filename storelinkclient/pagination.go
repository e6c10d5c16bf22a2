package storelinkclient

import (
	"context"
	"errors"
	"fmt"
	"iter"
)

// ErrPageLimit is wrapped by the error [AllPOSTransactions] yields when it
// has read its page budget and StoreLink still offers another page.
var ErrPageLimit = errors.New("storelink: page limit reached")

// ErrRepeatedCursor is wrapped by the error [AllPOSTransactions] yields when
// a cursor comes back a second time.
var ErrRepeatedCursor = errors.New("storelink: repeated page cursor")

// AllPOSTransactions yields the POS transactions of one SKU at a store,
// newest first; a non-nil params.Cursor resumes a walk, and the editors go
// on every page request. It ends at a page without next_cursor, or yields
// one (zero, err) and stops: a transport error, *APIError,
// ErrMalformedResponse, ErrPageLimit after maxPages, or ErrRepeatedCursor.
// Stopping the loop early sends no further requests.
func AllPOSTransactions(ctx context.Context, c ClientWithResponsesInterface, storeID StoreID, params ListPOSTransactionsParams, maxPages int, editors ...RequestEditorFn) iter.Seq2[POSTransaction, error] {
	return func(yield func(POSTransaction, error) bool) {
		if maxPages < 1 {
			yield(POSTransaction{}, fmt.Errorf("storelink: listPOSTransactions: maxPages must be at least 1, got %d", maxPages))
			return
		}
		p := params
		seen := make(map[string]bool, maxPages)
		if p.Cursor != nil {
			seen[*p.Cursor] = true
		}
		for pages := 1; ; pages++ {
			page, err := Result(c.ListPOSTransactionsWithResponse(ctx, storeID, &p, editors...))
			if err != nil {
				yield(POSTransaction{}, err)
				return
			}
			for _, tx := range page.Transactions {
				if !yield(tx, nil) {
					return
				}
			}
			next := page.NextCursor
			switch {
			case next == nil:
				return
			case *next == "":
				// The spec gives next_cursor a minimum length of 1; ending the
				// walk here would silently drop the remaining pages.
				yield(POSTransaction{}, fmt.Errorf("%w from listPOSTransactions: empty next_cursor on page %d", ErrMalformedResponse, pages))
				return
			case seen[*next]:
				yield(POSTransaction{}, fmt.Errorf("%w: page %d of store %s offered a cursor already seen", ErrRepeatedCursor, pages, storeID))
				return
			case pages >= maxPages:
				yield(POSTransaction{}, fmt.Errorf("%w: read %d pages of store %s and more remain", ErrPageLimit, pages, storeID))
				return
			}
			seen[*next] = true
			cursor := *next
			p.Cursor = &cursor
		}
	}
}
