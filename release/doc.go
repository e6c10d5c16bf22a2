// Package release holds the tests of what `make release` and `make image`
// put under dist/ (archives, checksums, the MCP bundles and the registry's
// server.json, checked against the pinned server.schema.json beside this file,
// the OCI image, the client module's release) and of the production build, plus the runbook commands of
// docs/operations.md run against a release. It has no code of its own: `make
// release-check` runs its dist tests against a fresh dist/.
package release
