// Package release holds the tests of what `make release` and `make image`
// put under dist/: the archives and checksums, the MCP bundles and the
// registry's server.json (checked against the pinned server.schema.json
// beside this file), the container image and the client module's release;
// and of the production build and the commands of docs/operations.md. It
// has no code of its own: `make release-check` runs the dist tests against a
// fresh dist/.
package release
