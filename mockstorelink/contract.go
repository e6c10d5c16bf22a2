package mockstorelink

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"sync"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/legacy"
	"github.com/korral/storelink/openapi"
)

// contract is the parsed StoreLink spec with a router, built once per
// process and shared read-only.
type contract struct {
	doc    *openapi3.T
	router routers.Router
}

var loadContract = sync.OnceValues(func() (*contract, error) {
	// A private copy: the router must not match the production server URL
	// (the mock answers on any host), and openapi.Load's copy is shared.
	doc, err := openapi.Parse(openapi.YAML)
	if err != nil {
		return nil, err
	}
	doc.Servers = nil
	router, err := legacy.NewRouter(doc)
	if err != nil {
		return nil, fmt.Errorf("build StoreLink router: %w", err)
	}
	return &contract{doc: doc, router: router}, nil
})

var (
	requestOptions = &openapi3filter.Options{
		// The mock checks keys itself, before parameters, as StoreLink does.
		AuthenticationFunc: openapi3filter.NoopAuthenticationFunc,
		// Defaults are the handler's business; the request stays as sent.
		SkipSettingDefaults: true,
	}
	responseOptions = &openapi3filter.Options{
		AuthenticationFunc:    openapi3filter.NoopAuthenticationFunc,
		IncludeResponseStatus: true,
	}
)

// validateResponse checks a captured response against the operation's
// declared responses: status, headers and body.
func validateResponse(ctx context.Context, in *openapi3filter.RequestValidationInput, c *capture) error {
	return openapi3filter.ValidateResponse(ctx, &openapi3filter.ResponseValidationInput{
		RequestValidationInput: in,
		Status:                 c.statusCode(),
		Header:                 c.header,
		Body:                   io.NopCloser(bytes.NewReader(c.body.Bytes())),
		Options:                responseOptions,
	})
}
