// Package mockstorelink is a strict, deterministic stand-in for StoreLink.
package mockstorelink
