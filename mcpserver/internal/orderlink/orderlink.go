// Package orderlink builds the one URL at which the approvals console shows
// a staged order, so that the console's router, the webhook notice, the URL
// elicitation and the tool's answer all use the same route.
//
// The route takes the approval id (apr-…). A link must carry nothing but the
// console's public base URL and that id: no token and no session. Opening it
// still needs a log-in as an approver in the order's store scope.
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

// URL is the order's page under the console's public base URL; "" when
// either is empty, which callers take as "no link".
func URL(consoleBase, approvalID string) string {
	if consoleBase == "" || approvalID == "" {
		return ""
	}
	return strings.TrimSuffix(consoleBase, "/") + Path(approvalID)
}
