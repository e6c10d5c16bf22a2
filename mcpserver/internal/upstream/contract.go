package upstream

import (
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/korral/storelink/mcpserver/internal/apperr"
	"github.com/korral/storelink/storelinkclient"
)

// RemediationBaseURL is the advice for an answer no StoreLink gives: the
// server at the base URL is most likely not StoreLink at all.
const RemediationBaseURL = "Do not change the SKU or id: they were not the problem. The server at UPSTREAM_BASE_URL does not answer like StoreLink; tell the user the data is unavailable, and ask an operator to check UPSTREAM_BASE_URL (StoreLink's base URL, without /v1) with `storelink-mcp doctor`."

// RemediationErrorBody is the advice for a refusal whose JSON body is not
// the contract's error object: the address answers in JSON, so it is most
// likely StoreLink, whose error body departs from the contract.
const RemediationErrorBody = "Do not change the SKU or id on this account: what the refusal means is unknown. Tell the user the data is unavailable; StoreLink's error body departs from the contract, so ask an operator to run `storelink-contract check` against it and report the difference to Korral IT with the call id."

// outsideContract recognises answers that break the contract in a way that
// says more about the address than about the request: a refusal (4xx other
// than 429) without StoreLink's error body, such as a web server's HTML 404
// or a gateway's login page, and a read answered with a body that is not
// JSON. Taken at face value the first would read as NOT_FOUND ("check the
// SKU") or AUTH_KEY_INVALID and blame the buyer's input or the key. Only
// an answer that is not JSON at all points at UPSTREAM_BASE_URL; a refusal
// in JSON of another shape ({"detail": "Not Found"}) is a contract error
// naming its status and the properties the body has instead. Other errors
// are returned unchanged; a write's unreadable success stays with the
// write path's classification, since an order may exist.
func outsideContract(method, route string, err error) error {
	where := method + " " + route
	var apiErr *storelinkclient.APIError
	switch {
	case errors.As(err, &apiErr):
		s := apiErr.StatusCode
		if apiErr.ErrorInSuccess || apiErr.Code != "" || s < 400 || s >= 500 || s == http.StatusTooManyRequests {
			return err
		}
		if apiErr.OtherJSON {
			f, _ := describe(route, err)
			return apperr.Wrap(apperr.UpstreamContractError, f,
				fmt.Sprintf("StoreLink answered %s with status %d and a JSON body without the contract's error object {\"error\": {\"code\", \"message\"}}%s, so what the refusal means is unknown",
					where, s, hasInstead(apiErr.BodyProperties)),
				RemediationErrorBody)
		}
		return apperr.Wrap(apperr.UpstreamContractError, err,
			fmt.Sprintf("the server at UPSTREAM_BASE_URL answered %s with status %d but without StoreLink's error body, so it is probably not StoreLink", where, s),
			RemediationBaseURL)
	case method == http.MethodGet && errors.Is(err, storelinkclient.ErrMalformedResponse) && strings.Contains(err.Error(), "is not JSON"):
		// The fault is the cause: err quotes the Content-Type it got.
		f, _ := describe(route, err)
		return apperr.Wrap(apperr.UpstreamContractError, f,
			fmt.Sprintf("the server at UPSTREAM_BASE_URL answered %s with a body that is not JSON, so it is probably not StoreLink", where),
			RemediationBaseURL)
	}
	return err
}
