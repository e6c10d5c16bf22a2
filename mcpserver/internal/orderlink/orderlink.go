// Package orderlink builds the one console URL of a staged order, so every
// link uses the same route. A link carries only the public base URL and
// the approval id, never a token; opening it needs a log-in.
package orderlink

import (
	"net/url"
	"strings"
)

// Prefix is the path before the approval id: the console routes
// GET Prefix+"{id}" to the order page.
const Prefix = "/orders/"

// Path is the console path of the order staged under approvalID.
func Path(approvalID string) string { return Prefix + url.PathEscape(approvalID) }

// URL is the order's page under the public base URL; "" when either is
// empty.
func URL(consoleBase, approvalID string) string {
	if consoleBase == "" || approvalID == "" {
		return ""
	}
	return strings.TrimSuffix(consoleBase, "/") + Path(approvalID)
}
