// Package openapi holds the StoreLink contract, the OpenAPI 3.0.3 document
// storelink.yaml, embedded so that every program of the toolkit reads one copy.
package openapi

import (
	"context"
	_ "embed"
	"fmt"
	"sync"

	"github.com/getkin/kin-openapi/openapi3"
)

// YAML is the StoreLink contract exactly as written in storelink.yaml.
//
//go:embed storelink.yaml
var YAML []byte

var (
	loadOnce sync.Once
	loaded   *openapi3.T
	loadErr  error
)

// Load parses and validates the embedded contract. The document is parsed once
// per process; callers share the result and must not modify it.
func Load() (*openapi3.T, error) {
	loadOnce.Do(func() {
		loaded, loadErr = Parse(YAML)
	})
	return loaded, loadErr
}

// Parse parses an OpenAPI document and validates it, examples included,
// with kin-openapi.
func Parse(data []byte) (*openapi3.T, error) {
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData(data)
	if err != nil {
		return nil, fmt.Errorf("parse StoreLink contract: %w", err)
	}
	if err := doc.Validate(context.Background(), openapi3.EnableExamplesValidation()); err != nil {
		return nil, fmt.Errorf("validate StoreLink contract: %w", err)
	}
	return doc, nil
}
