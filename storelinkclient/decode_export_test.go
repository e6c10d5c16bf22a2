package storelinkclient

import "reflect"

// DecodeBody is decodeBody, for the external tests.
var DecodeBody = decodeBody

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
