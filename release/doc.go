// Package release holds the tests of `make release` and `make image` output
// in dist/, the production build and docs/operations.md's commands. It has
// no code of its own.
package release
