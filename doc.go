// Package storelink is the composition root of the Korral StoreLink toolkit: its
// binaries live under cmd/ and its end-to-end tests beside this file.
package storelink
