package tools

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/korral/storelink/mcpserver/internal/keyring"
	"github.com/korral/storelink/mcpserver/internal/replenish"
)

// BenchmarkRiskAnswerBuilding is the risk check's work after the
// projection: the answer for the model, its audit sentence and its JSON
// envelope, for one store over 14 days (the fake StoreLink's butter).
func BenchmarkRiskAnswerBuilding(b *testing.B) {
	kr, err := keyring.Parse([]byte(`{"47":"k1"}`))
	if err != nil {
		b.Fatal(err)
	}
	s := &server{opts: Options{Upstream: newFake(), Keyring: func() *keyring.Keyring { return kr }, Now: func() time.Time { return testNow }},
		log: slog.New(slog.DiscardHandler)}
	a, err := s.workflow().Assess(context.Background(), "47", "8847291", 14)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		out := &stockRiskOut{SKU: "8847291", Stores: []storeRisk{{StoreID: "47", StoreName: a.Identity.StoreName, Risk: compactFacts(a)}}}
		found := []*replenish.Assessment{a}
		markRiskAnswer(out, found, nil)
		_ = riskSummary("8847291", out.Stores, found)
		if _, err := successEnvelope(out, false); err != nil {
			b.Fatal(err)
		}
	}
}
