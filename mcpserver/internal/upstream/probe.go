package upstream

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/korral/storelink/storelinkclient"
)

// Probe is StoreLink's answer to GET /v1/stores without a key (a 401 with
// its error body).
type Probe struct {
	// Redirect describes a redirect ("a 302 redirect to host"), not followed;
	// the other fields are then zero.
	Redirect    string
	Status      int
	ContentType string
	// JSON is set when the body is JSON of any shape; StoreLinkError when
	// it is the contract's error object on a 401.
	JSON, StoreLinkError bool
	// Date is the answer's Date header; At is when the request was sent; Took
	// how long the answer took.
	Date string
	At   time.Time
	Took time.Duration
}

// BaseURLError is a base URL that no request can be built for.
type BaseURLError struct{ Err error }

func (e *BaseURLError) Error() string { return e.Err.Error() }
func (e *BaseURLError) Unwrap() error { return e.Err }

// ProbeKeyless sends GET /v1/stores to baseURL without a key, following no
// redirect, for storelink-mcp doctor. An error is a bad base URL
// (*BaseURLError) or no answer.
func ProbeKeyless(ctx context.Context, baseURL string) (Probe, error) {
	api, err := storelinkclient.NewClient(baseURL)
	if err != nil {
		return Probe{}, &BaseURLError{Err: err}
	}
	start := time.Now()
	resp, err := api.ListStores(ctx, func(_ context.Context, req *http.Request) error {
		req.Header.Set("Accept", "application/json")
		return nil
	})
	var redirect *storelinkclient.RedirectError
	if errors.As(err, &redirect) {
		what := "a redirect"
		if redirect.StatusCode != 0 {
			what = fmt.Sprintf("a %d redirect", redirect.StatusCode)
		}
		if redirect.Host != "" {
			what += " to " + redirect.Host
		}
		return Probe{Redirect: what}, nil
	}
	if err != nil {
		return Probe{}, err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	var apiErr *storelinkclient.APIError
	p := Probe{Status: resp.StatusCode, ContentType: resp.Header.Get("Content-Type"), JSON: json.Valid(body),
		Date: resp.Header.Get("Date"), At: start, Took: time.Since(start)}
	p.StoreLinkError = errors.As(storelinkclient.CheckResponse(resp, body), &apiErr) && resp.StatusCode == http.StatusUnauthorized && apiErr.Code != ""
	return p, nil
}
