// Package e2e holds the end-to-end tests of the real binary against a mock
// StoreLink; README.md says what it covers and how to run one test. It has
// no code of its own.
package e2e
