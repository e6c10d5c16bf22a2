package storelinkclient

import (
	"net/http"
	"reflect"
	"testing"
)

// TestEveryOperationWorksWithResult guards against an operation added to the
// spec whose response type lacks the methods Result needs: it lists the
// generated interface rather than trusting the hand-kept list in responses.go.
func TestEveryOperationWorksWithResult(t *testing.T) {
	type resultable interface {
		rawResponse() *http.Response
		operation() (string, int)
	}
	want := reflect.TypeFor[resultable]()
	iface := reflect.TypeFor[ClientWithResponsesInterface]()
	ids := map[string]bool{}
	for m := range iface.Methods() {
		resp := m.Type.Out(0)
		if !resp.Implements(want) {
			t.Errorf("%s returns %s, which Result cannot take: add its methods to responses.go", m.Name, resp)
			continue
		}
		id, status := reflect.Zero(resp).Interface().(resultable).operation()
		if status < 200 || status > 299 {
			t.Errorf("%s: success status %d is not 2xx", m.Name, status)
		}
		ids[id] = true
	}
	// Two methods (with a typed body and with any body) share one operation.
	if len(ids) != 8 {
		t.Errorf("%d distinct operations, want the spec's 8: %v", len(ids), ids)
	}
}
