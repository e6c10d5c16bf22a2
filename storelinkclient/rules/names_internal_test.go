package rules

import "testing"

// TestNamesFollowTheGeneratedTypes: the rules name a field by its generated
// type's JSON name, so a rename in the contract that keeps the Go name
// (x-go-name) is followed after make generate with no hand edit.
func TestNamesFollowTheGeneratedTypes(t *testing.T) {
	type renamed struct {
		QuantityUnits int64   `json:"quantity"`
		Cutoff        *string `json:"order_cutoff,omitempty"`
		Odd           string  `json:"a/b~c"`
	}
	if got := prop[renamed]("QuantityUnits"); got != "quantity" {
		t.Errorf("QuantityUnits is %q, want StoreLink's quantity", got)
	}
	if got := prop[renamed]("Cutoff"); got != "order_cutoff" {
		t.Errorf("Cutoff is %q, want the name without its options", got)
	}
	if got := ptr(prop[renamed]("Odd")); got != "/a~1b~0c" {
		t.Errorf("pointer %q, want it escaped", got)
	}
	defer func() {
		if recover() == nil {
			t.Error("a Go field the generated type lacks did not stop the package")
		}
	}()
	prop[renamed]("Reason")
}
