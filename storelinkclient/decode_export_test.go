package storelinkclient

import "reflect"

// DecodeBody is decodeBody without the body on its error (decodeJSON),
// for the external tests, which compare the error with encoding/json's.
var DecodeBody = decodeJSON

// CountItems is countItems, for the external tests.
var CountItems = countItems

// DecodedInOnePass reports whether decodeBody fills a new value of v's
// type from body itself, without leaving it to encoding/json.
func DecodedInOnePass(body []byte, v any) bool {
	t := reflect.TypeOf(v).Elem()
	sh, p := decodePlanOf(t)
	if p == nil {
		return false
	}
	_, state := decodeFields(body, sh, p, reflect.New(t).Elem())
	return state == decodeDone
}
