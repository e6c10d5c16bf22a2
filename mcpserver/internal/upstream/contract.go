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
// base URL is likely not StoreLink.
const RemediationBaseURL = "Do not change the SKU or id: they were not the problem. The server at UPSTREAM_BASE_URL does not answer like StoreLink; tell the user the data is unavailable, and ask an operator to check UPSTREAM_BASE_URL (StoreLink's base URL, without /v1) with `storelink-mcp doctor`."

// RemediationErrorBody is the advice for a refusal whose JSON body is not
// the contract's error object: likely StoreLink, off contract.
const RemediationErrorBody = "Do not change the SKU or id on this account: what the refusal means is unknown. Tell the user the data is unavailable; StoreLink's error body departs from the contract, so ask an operator to run `storelink-contract check` against it and report the difference to Korral IT with the call id."

// outsideContract recognises answers that say more about the address than
// the request: a 4xx (not 429) without StoreLink's error body, or a read
// with a non-JSON body, which would otherwise blame the buyer's input or
// key. Only non-JSON points at UPSTREAM_BASE_URL; JSON of another shape is
// a contract error naming its status and properties. Other errors, and a
// write's unreadable success (the order may exist), are returned unchanged.
func outsideContract(method, route string, err error) error {
	if err == nil {
		return nil
	}
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
