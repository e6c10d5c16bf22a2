package bearer

import (
	"errors"
	"testing"
)

func TestToken(t *testing.T) {
	cases := []struct {
		name   string
		values []string
		token  string
		err    error
	}{
		{"none", nil, "", ErrNoBearer},
		{"bearer", []string{"Bearer " + tokA}, tokA, nil},
		{"any case", []string{"bEaReR " + tokA}, tokA, nil},
		{"tab after the scheme", []string{"Bearer\t" + tokA}, tokA, nil},
		{"spaces around", []string{"  Bearer   " + tokA + " \t"}, tokA, nil},
		{"basic", []string{"Basic dXNlcjpwYXNz"}, "", ErrNoBearer},
		{"scheme run into the token", []string{"Bearer" + tokA}, "", ErrNoBearer},
		{"scheme alone", []string{"Bearer"}, "", ErrMalformed},
		{"scheme and blanks", []string{"Bearer \t "}, "", ErrMalformed},
		{"two words", []string{"Bearer " + tokA + " " + tokB}, "", ErrMalformed},
		{"two words split by a tab", []string{"Bearer " + tokA + "\t" + tokB}, "", ErrMalformed},
		{"bearer after basic", []string{"Basic dXNlcjpwYXNz", "Bearer " + tokA}, "", ErrSeveral},
		{"basic after bearer", []string{"Bearer " + tokA, "Basic dXNlcjpwYXNz"}, "", ErrSeveral},
		{"bearer twice", []string{"Bearer " + tokA, "Bearer " + tokA}, "", ErrSeveral},
		{"bearer and an empty line", []string{"Bearer " + tokA, ""}, "", ErrSeveral},
	}
	for _, c := range cases {
		got, err := Token(c.values)
		if got != c.token || !errors.Is(err, c.err) {
			t.Errorf("%s: Token(%q) = %q, %v; want %q, %v", c.name, c.values, got, err, c.token, c.err)
		}
	}
}

func TestPresented(t *testing.T) {
	yes := [][]string{
		{"Bearer x"},
		{"bearer x"},
		{"BEARER\tx"},
		{"Bearer\tx"},
		{"Bearer"},
		{" Bearer x"},
		{"Basic dXNlcjpwYXNz", "Bearer x"},
		{"Basic dXNlcjpwYXNz", "bearer\tx"},
		{"Basic dXNlcjpwYXNz, Bearer x"},
		{"Basic dXNlcjpwYXNz,bearer\tx"},
	}
	for _, v := range yes {
		if !Presented(v) {
			t.Errorf("Presented(%q) = false; want true", v)
		}
	}
	no := [][]string{
		nil,
		{""},
		{"Basic dXNlcjpwYXNz"},
		{"Bearerx"},
		{"Digest username=\"Bearer x\", realm=\"r\""},
		{"Basic QmVhcmVy"},
	}
	for _, v := range no {
		if Presented(v) {
			t.Errorf("Presented(%q) = true; want false", v)
		}
	}
}

// Whatever Token accepts, Presented sees: a place that refuses bearer
// tokens refuses every one a place that reads them would take.
func TestPresentedCoversToken(t *testing.T) {
	for _, v := range [][]string{{"Bearer x"}, {"bearer\tx"}, {" BEARER  x "}, {"Bearer\t\tx"}} {
		if _, err := Token(v); err == nil && !Presented(v) {
			t.Errorf("Token(%q) reads a token that Presented misses", v)
		}
	}
}
