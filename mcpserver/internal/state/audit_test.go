package state

import (
	"testing"
)

func TestNearestRank(t *testing.T) {
	tests := []struct {
		values []float64
		p      int
		want   float64
	}{
		{[]float64{7}, 50, 7},
		{[]float64{7}, 99, 7},
		{[]float64{1, 2}, 50, 1},
		{[]float64{1, 2}, 51, 2},
		{[]float64{15, 20, 35, 40, 50}, 30, 20},
		{[]float64{15, 20, 35, 40, 50}, 40, 20},
		{[]float64{15, 20, 35, 40, 50}, 50, 35},
		{[]float64{15, 20, 35, 40, 50}, 100, 50},
		{[]float64{15, 20, 35, 40, 50}, 0, 15},
	}
	for _, tt := range tests {
		if got := NearestRank(tt.values, tt.p); got != tt.want {
			t.Errorf("NearestRank(%v, %d) = %v, want %v", tt.values, tt.p, got, tt.want)
		}
	}
}
