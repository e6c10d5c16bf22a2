package eval_test

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/korral/storelink/eval"
	"github.com/korral/storelink/internal/e2etest"
)

// TestMain removes the server binary the tests built (e2etest.Binary).
func TestMain(m *testing.M) { os.Exit(e2etest.Run(m)) }

// TestScenarios runs every shipped scenario against the real server: the
// normal ones must pass and the negative controls must fail their checks.
func TestScenarios(t *testing.T) {
	scenarios, err := eval.Scenarios()
	if err != nil {
		t.Fatal(err)
	}
	controls := 0
	for _, sc := range scenarios {
		if sc.NegativeControl {
			controls++
		}
	}
	if controls < 2 {
		t.Fatalf("%d negative controls; the checks are only shown to fail with at least 2", controls)
	}
	bin := e2etest.Binary(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var results []*eval.Result
	for _, sc := range scenarios {
		t.Run(sc.Name, func(t *testing.T) {
			r := eval.RunScenario(ctx, sc, bin)
			results = append(results, r)
			if r.Err != nil {
				t.Fatalf("harness error: %v\nserver log:\n%s", r.Err, r.ServerLog)
			}
			if r.AsExpected() {
				return
			}
			if sc.NegativeControl {
				t.Errorf("negative control did not fail the checks it must fail (%s); failed instead: %v",
					strings.Join(sc.MustFail, ", "), r.Failures())
			} else {
				t.Errorf("failed checks:\n  %s", strings.Join(r.Failures(), "\n  "))
			}
			for i, s := range r.Run.Steps {
				t.Logf("call %d: %s %s -> %s\n%s", i+1, s.Call.Name, s.Call.Arguments, s.Outcome, s.Result)
			}
			t.Logf("answer: %q\nserver log:\n%s", r.Run.Answer, r.ServerLog)
		})
	}
	var report bytes.Buffer
	if ok := eval.Report(&report, results); ok != !t.Failed() {
		t.Errorf("report verdict %v disagrees with the test's", ok)
	}
	t.Logf("\n%s", report.String())
}
