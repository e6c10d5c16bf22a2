// Package storelink is the composition root of the Korral StoreLink toolkit: its
// binaries live under cmd/, its end-to-end tests under e2e/.
package storelink
