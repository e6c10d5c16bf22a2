// Package storelink is the root module of the Korral StoreLink toolkit. It
// holds no code of its own: its binaries live under cmd/, its end-to-end
// tests under e2e/, and the rest of the toolkit in the workspace's modules.
package storelink
