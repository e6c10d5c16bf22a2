package upstream

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/korral/storelink/mcpserver/internal/apperr"
	"github.com/korral/storelink/storelinkclient"
)

// classify maps a StoreLink outcome to the taxonomy. For a write it also
// sets how far the order got (apperr.Reach), so the ledger never calls a
// possibly existing order "not sent", nor an untaken one "unknown".
func classify(method, route string, err error, cooldown time.Duration) *apperr.Error {
	return classifyFor(method, route, subject{}, err, cooldown)
}

// classifyFor is classify for a request about a known store and SKU or id,
// which the NOT_FOUND and key messages then name.
func classifyFor(method, route string, about subject, err error, cooldown time.Duration) *apperr.Error {
	var ae *apperr.Error
	if errors.As(err, &ae) {
		return ae
	}
	ae = classifyError(method, route, about, err, cooldown)
	if method == http.MethodPost {
		ae.Reach = writeReach(err, ae.Code)
	}
	return ae
}

// writeReach is how far a failed order got; unknown unless known to have
// stopped short of StoreLink or been refused by it.
func writeReach(err error, code apperr.Code) apperr.Reach {
	var apiErr *storelinkclient.APIError
	var redirect *storelinkclient.RedirectError
	switch {
	case errors.Is(err, errBreakerOpen), errors.Is(err, errBudget), isDialError(err):
		return apperr.ReachNotSent
	case errors.As(err, &redirect) && !redirect.Followed:
		// A 3xx that was not followed: no StoreLink received the order.
		return apperr.ReachNotSent
	case !errors.As(err, &apiErr) || apiErr.ErrorInSuccess:
		return apperr.ReachUnknown
	case apiErr.StatusCode == http.StatusUnauthorized, apiErr.StatusCode == http.StatusTooManyRequests:
		// Refused before StoreLink read the order: nothing was taken.
		return apperr.ReachNotSent
	case code == apperr.InvalidArgument, code == apperr.StoreNotAuthorized, code == apperr.NotFound, code == apperr.UpstreamRejected:
		return apperr.ReachRejected
	default:
		return apperr.ReachUnknown
	}
}

func classifyError(method, route string, about subject, err error, cooldown time.Duration) *apperr.Error {
	write := method == http.MethodPost
	where := method + " " + route
	var apiErr *storelinkclient.APIError
	var redirect *storelinkclient.RedirectError
	switch {
	case errors.As(err, &redirect):
		return redirected(write, where, redirect)
	case errors.Is(err, errBudget):
		// The call ended while waiting for a slot: nothing was sent.
		return apperr.Wrap(apperr.UpstreamUnavailable, err,
			"the call ended while its request to StoreLink waited behind others; nothing was sent",
			"Call the tool again if the answer is still needed; if this repeats, StoreLink is slow or rate-limiting this deployment.")
	case errors.Is(err, errBreakerOpen):
		e := apperr.Wrap(apperr.UpstreamUnavailable, err,
			"StoreLink has been failing, so calls to it are paused for a short cool-down",
			fmt.Sprintf("Wait about %d seconds, then try again; nothing was sent to StoreLink.", int(cooldown.Seconds())))
		e.RetryAfterSeconds = int(cooldown.Seconds())
		return e
	case errors.As(err, &apiErr):
		return classifyAPIError(write, where, about, apiErr)
	case errors.Is(err, storelinkclient.ErrResponseTooLarge), errors.Is(err, storelinkclient.ErrMalformedResponse):
		// The fault names field and rule without quoting the answer, so no log
		// line repeats a value StoreLink sent.
		f, _ := describe(route, err)
		if write {
			return apperr.Wrap(apperr.WriteOutcomeUnknown, f,
				fmt.Sprintf("StoreLink answered the order with a response that could not be read (%s), so whether the order was raised is unknown", f),
				"Do not resubmit. Check with korral_get_order_status (the ledger entry's idempotency key or order id) before deciding.")
		}
		return apperr.Wrap(apperr.UpstreamContractError, f, brokeContract(where, f),
			"This is a StoreLink fault, not yours: retrying will likely fail the same way; tell the user which field StoreLink got wrong, and report it to Korral IT with the call id.")
	case errors.Is(err, context.DeadlineExceeded) || isTimeout(err):
		if write {
			return apperr.Wrap(apperr.WriteOutcomeUnknown, err,
				"StoreLink did not answer the order in time, so whether it was raised is unknown",
				"Do not resubmit. Check korral_get_order_status with the idempotency key first; resubmitting could raise a second order.")
		}
		return apperr.Wrap(apperr.UpstreamTimeout, err,
			fmt.Sprintf("StoreLink did not answer %s in time", where),
			"Try again in a minute; if it keeps timing out, StoreLink is degraded: tell the buyer the answer is unavailable.")
	case errors.Is(err, context.Canceled) && write:
		// The order may have left before the caller gave up.
		return apperr.Wrap(apperr.WriteOutcomeUnknown, err,
			"the call was cancelled while the order was being sent, so whether it was raised is unknown",
			"Do not resubmit. Check korral_get_order_status with the idempotency key first.")
	case errors.Is(err, context.Canceled):
		return apperr.Wrap(apperr.UpstreamUnavailable, err, "the call was cancelled before StoreLink answered", "Call the tool again if the answer is still needed.")
	default:
		if write && !isDialError(err) {
			return apperr.Wrap(apperr.WriteOutcomeUnknown, err,
				"the connection to StoreLink failed while the order was being sent, so whether it was raised is unknown",
				"Do not resubmit. Check korral_get_order_status with the idempotency key first.")
		}
		return apperr.Wrap(apperr.UpstreamUnavailable, err,
			"StoreLink could not be reached",
			"Try again in a minute; if it persists, StoreLink is down: tell the buyer the answer is unavailable.")
	}
}

// redirected answers a 3xx. StoreLink never redirects, so the address or a
// proxy is misconfigured; the target is not trusted with a key.
func redirected(write bool, where string, r *storelinkclient.RedirectError) *apperr.Error {
	what := "a redirect"
	if r.StatusCode != 0 {
		what = fmt.Sprintf("a %d redirect", r.StatusCode)
	}
	if host := r.Host; host != "" {
		// storelinkclient keeps only a host-like part; the message needs only
		// its start.
		if len(host) > 100 {
			host = host[:100] + "..."
		}
		what += " to " + host
	}
	msg := fmt.Sprintf("the server at UPSTREAM_BASE_URL answered %s with %s, which StoreLink never sends; it was not followed, so nothing was sent to that host", where, what)
	if r.Followed {
		msg = fmt.Sprintf("the server at UPSTREAM_BASE_URL answered %s with %s, which StoreLink never sends, and the HTTP client followed it", where, what)
	}
	fix := "Do not retry: tell the user the data is unavailable, and ask an operator to set UPSTREAM_BASE_URL to StoreLink's own address (without /v1) and check it with `storelink-mcp doctor`."
	if write && !r.Followed {
		msg += "; the order was not raised"
		fix = "Do not retry until an operator has set UPSTREAM_BASE_URL to StoreLink's own address (check it with `storelink-mcp doctor`); then the same request can be confirmed again."
	}
	f, _ := describe("", r)
	if write && r.Followed {
		// None of our doers follows redirects; if one did, the order may exist.
		return apperr.Wrap(apperr.WriteOutcomeUnknown, f, msg+", so whether the order was raised is unknown",
			"Do not resubmit. Check korral_get_order_status with the idempotency key first, and ask an operator to fix UPSTREAM_BASE_URL.")
	}
	return apperr.Wrap(apperr.UpstreamContractError, f, msg, fix)
}

func classifyAPIError(write bool, where string, about subject, e *storelinkclient.APIError) *apperr.Error {
	if e.ErrorInSuccess {
		if write {
			return apperr.Wrap(apperr.WriteOutcomeUnknown, e,
				"StoreLink answered the order with success status but an error body, so whether it was raised is unknown",
				"Do not resubmit. Check korral_get_order_status with the idempotency key first.")
		}
		// The fault is the cause, so StoreLink's message is not logged as ours.
		f, _ := describe("", e)
		return apperr.Wrap(apperr.UpstreamContractError, f,
			fmt.Sprintf("StoreLink answered %s with a success status but an error body (code %q); it is treated as an error, never as data", where, e.Code),
			"This is a known StoreLink fault: report it to Korral IT with the call id; do not rely on this endpoint's answer.")
	}
	switch s := e.StatusCode; {
	case s == http.StatusBadRequest:
		return apperr.Wrap(apperr.InvalidArgument, e,
			fmt.Sprintf("StoreLink refused the parameters of %s (%s)", where, e.Code),
			"Check the SKU, ids and dates you passed; correct them and call again.")
	case s == http.StatusUnauthorized:
		return apperr.Wrap(apperr.AuthKeyInvalid, e,
			fmt.Sprintf("StoreLink refused this deployment's key for %s (missing, unknown or rotated)", about.store()),
			"Nothing the agent can fix: the operator must install the store's current key (keys rotate weekly). Tell the buyer.")
	case s == http.StatusForbidden:
		return apperr.Wrap(apperr.StoreNotAuthorized, e,
			fmt.Sprintf("StoreLink says this deployment's key does not open %s", about.store()),
			"Use a store listed by korral_list_authorized_stores; if it is listed, the operator must fix the keyring.")
	case s == http.StatusNotFound:
		return notFound(where, about, e)
	case s == http.StatusUnprocessableEntity:
		return apperr.Wrap(apperr.UpstreamRejected, e,
			fmt.Sprintf("StoreLink refused the request by a business rule (%s): %s", e.Code, storeLinkWords(e.Message)),
			"Read the rule in the message (for example a supplier minimum order), adjust the request, and preview it again.")
	case s == http.StatusTooManyRequests:
		ae := apperr.Wrap(apperr.RateLimited, e, "StoreLink is rate-limiting this deployment", "")
		ae.RetryAfterSeconds = int(e.RetryAfter.Seconds())
		if ae.RetryAfterSeconds <= 0 {
			ae.RetryAfterSeconds = 30
		}
		ae.Remediation = "Wait " + strconv.Itoa(ae.RetryAfterSeconds) + " seconds before calling again."
		return ae
	case s >= 500 && write:
		// StoreLink may have stored the order before failing: outcome unknown.
		return apperr.Wrap(apperr.WriteOutcomeUnknown, e,
			fmt.Sprintf("StoreLink failed with status %d while taking the order, so whether it was raised is unknown", s),
			"Do not resubmit. Check korral_get_order_status with the idempotency key first.")
	case s >= 500:
		ae := apperr.Wrap(apperr.UpstreamUnavailable, e,
			fmt.Sprintf("StoreLink failed with status %d", s),
			"Try again in a minute; if it persists, StoreLink is down: tell the buyer the answer is unavailable.")
		if e.RetryAfter > 0 {
			ae.RetryAfterSeconds = int(e.RetryAfter.Seconds())
		}
		return ae
	case write:
		return apperr.Wrap(apperr.WriteOutcomeUnknown, e,
			fmt.Sprintf("StoreLink answered the order with status %d, which the contract does not allow, so whether it was raised is unknown", s),
			"Do not resubmit. Check korral_get_order_status with the idempotency key first, and report the status to Korral IT with the call id.")
	default:
		return apperr.Wrap(apperr.UpstreamContractError, e,
			fmt.Sprintf("StoreLink answered %s with status %d, which the contract does not allow", where, s),
			"Report it to Korral IT with the call id.")
	}
}

// storeLinkWords is StoreLink's own explanation of a refusal, quoted,
// bounded and free of control characters.
func storeLinkWords(msg string) string {
	const limit = 200
	if r := []rune(msg); len(r) > limit {
		msg = string(r[:limit]) + "..."
	}
	return strconv.Quote(msg)
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

func isDialError(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial"
}
