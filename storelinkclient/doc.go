// Package storelinkclient is a typed Go client for Korral's StoreLink API:
// stores and opening hours, on-hand stock, point-of-sale transactions, SKU
// and supplier master data, and replenishment orders.
//
// # Constructing a client
//
// [NewClientWithResponses] takes StoreLink's base URL (a path prefix is
// kept) and options; its methods, one per operation of the contract, decode
// each answer into typed fields. [NewClient] is the same without decoding.
//
//	c, err := storelinkclient.NewClientWithResponses(baseURL,
//		storelinkclient.WithKeyring(map[storelinkclient.StoreID]string{"47": key47, "55": key55}),
//		storelinkclient.WithChainKey(key47),
//		storelinkclient.WithResponseLimit(storelinkclient.DefaultResponseLimit))
//	...
//	inv, err := storelinkclient.Result(c.GetInventoryWithResponse(ctx, "47",
//		&storelinkclient.GetInventoryParams{SKU: "8847291"}))
//
// # Store keys
//
// A key opens only the store it was issued for, plus the chain-wide reads
// (listStores, getSKU, getSupplier). [WithKeyring] and [WithStoreKeys] pick
// each request's key from the store in its path, and [WithChainKey] names
// the key sent on chain-wide reads; a request they hold no key for fails
// with a [*MissingKeyError] and is never sent. [WithStoreKey] instead
// authenticates a single call. No error of this package repeats a key.
//
// # What every client does
//
//   - Redirects are never followed, with the default doer or an
//     *http.Client given with [WithHTTPClient]: a 3xx answer fails the call
//     with a [*RedirectError], so a store key never travels to another
//     address.
//   - Every request carries a User-Agent naming this module and its version
//     ([DefaultUserAgent]), unless [WithUserAgent] or a request editor sets
//     another.
//   - [WithResponseLimit] bounds every response body; without it, bodies are
//     read without bound. [DefaultResponseLimit] suits StoreLink.
//
// # Errors
//
// [Result] turns a *WithResponse result into its typed body or an error.
// A failure is an [*APIError] (status, StoreLink code, message,
// Retry-After, and [APIError.Temporary] to tell a refusal from a condition
// worth retrying), including StoreLink's habit of answering 200 with an
// error body; a success whose body cannot be used wraps
// [ErrMalformedResponse]. Retrieve them with errors.As and errors.Is.
// A success missing a required field is a [*MissingFieldError];
// [ResultWithProblems] also returns the answer's other [FieldProblems]
// (rename candidates, unknown properties) from the same walk of the body,
// and [ResultWithFields] the fields the answer leaves out besides
// ([Absent]): a field StoreLink did not send decodes to its zero value,
// which a reader must not take for a value it sent.
//
// # Pagination and history
//
// [AllPOSTransactions] walks paginated point-of-sale transactions with a
// page budget and a guard against a cursor that loops; [HistoryStart] is the
// oldest instant StoreLink still holds sales for.
//
// # Semantic rules
//
// The sub-package rules checks what the schema cannot: a valid IANA
// timezone, consistent opening hours, echoed path ids, sales inside the
// requested window, an order read-back matching what was raised. Each rule
// has a stable id, shared by Korral's MCP server and its contract checker.
// A rule judges only what StoreLink sent: pass the [Absent] fields of the
// answer in the rules' Query, or let rules.Check find them in the body.
//
// # Generated code
//
// The types and methods in storelink.gen.go are generated from the StoreLink
// contract (openapi/storelink.yaml) by oapi-codegen, through this package's
// copies of two of its templates (client.tmpl, imports.tmpl), and are never
// edited by hand; so is timestamps.gen.go, whose StoreLocalTimestamps
// internal/gentimestamps writes from the contract's
// info.x-korral-timestamps. The other files are written by hand.
//
// # Store-local timestamps
//
// A contract that declares x-korral-timestamps: store-local describes a
// StoreLink that sends times without an offset, in the store's local
// clock. [LocalizeTimestamps] rewrites such an answer into RFC 3339 in
// the store's zone before it is decoded; [InZone] says how a wall time in
// a daylight-saving change is read (ADR 0032).
package storelinkclient

//go:generate env GOWORK=off go tool -modfile=../tools/go.mod oapi-codegen -config oapi-codegen.yaml ../openapi/storelink.yaml
