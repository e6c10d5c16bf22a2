package orderlink

import "testing"

func TestURL(t *testing.T) {
	for _, c := range []struct{ base, id, want string }{
		{"https://approvals.korral.example", "apr-0011", "https://approvals.korral.example/orders/apr-0011"},
		{"https://approvals.korral.example/", "apr-0011", "https://approvals.korral.example/orders/apr-0011"},
		{"https://korral.example/console", "apr-0011", "https://korral.example/console/orders/apr-0011"},
		{"https://approvals.korral.example", "a/b?c", "https://approvals.korral.example/orders/a%2Fb%3Fc"},
		{"", "apr-0011", ""},
		{"https://approvals.korral.example", "", ""},
	} {
		if got := URL(c.base, c.id); got != c.want {
			t.Errorf("URL(%q, %q) = %q, want %q", c.base, c.id, got, c.want)
		}
	}
}
