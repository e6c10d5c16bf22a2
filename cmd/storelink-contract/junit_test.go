package main

import (
	"encoding/xml"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	junit "github.com/joshdk/go-junit"
	"github.com/korral/storelink/mockstorelink"
)

func TestJUnitIsValidXML(t *testing.T) {
	t.Parallel()
	mock, keyring := startMock(t, mockstorelink.Fault{Kind: mockstorelink.FaultDriftMissingField, OperationID: mockstorelink.OpGetSKU})
	code, stdout, _ := cli(t, checkArgs(mock.URL, keyring, "--format", "junit")...)
	if code != 1 {
		t.Fatalf("exit %d", code)
	}
	var doc struct {
		Tests    int `xml:"tests,attr"`
		Failures int `xml:"failures,attr"`
		Suites   []struct {
			Cases []struct {
				ClassName string `xml:"classname,attr"`
				Failure   *struct {
					Text string `xml:",chardata"`
				} `xml:"failure"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal([]byte(stdout), &doc); err != nil {
		t.Fatalf("not XML: %v\n%s", err, stdout)
	}
	// getSKU's valid key and another store's key (any key reads a SKU),
	// led by their one cause in a suite of its own.
	if doc.Failures != 3 || doc.Tests < 30 || len(doc.Suites) != 2 || len(doc.Suites[0].Cases) != 1 {
		t.Fatalf("tests %d, failures %d, suites %d", doc.Tests, doc.Failures, len(doc.Suites))
	}
	if c := doc.Suites[0].Cases[0]; c.ClassName != "cause" || !strings.Contains(c.Failure.Text, "seen 2 times on getSKU") {
		t.Errorf("the cause: %s %+v", c.ClassName, c.Failure)
	}
	for _, c := range doc.Suites[1].Cases {
		if c.Failure != nil && (c.ClassName != "getSKU" || !strings.Contains(c.Failure.Text, "schema at /supplier_id")) {
			t.Errorf("failure on %s: %s", c.ClassName, c.Failure.Text)
		}
	}
	// Every token must decode, not only the parts the struct above reads.
	dec := xml.NewDecoder(strings.NewReader(stdout))
	for {
		if _, err := dec.Token(); err != nil {
			if !errors.Is(err, io.EOF) {
				t.Fatalf("XML token error: %v", err)
			}
			break
		}
	}
}

// TestJUnitReadByAJUnitConsumer parses the report with go-junit.
func TestJUnitReadByAJUnitConsumer(t *testing.T) {
	t.Parallel()
	mock, keyring := startMock(t, mockstorelink.Fault{Kind: mockstorelink.FaultDriftMissingField, OperationID: mockstorelink.OpGetSKU})
	before := time.Now().UTC().Truncate(time.Second)
	code, stdout, _ := cli(t, checkArgs(mock.URL, keyring, "--format", "junit")...)
	if code != 1 {
		t.Fatalf("exit %d", code)
	}
	suites, err := junit.Ingest([]byte(stdout))
	if err != nil {
		t.Fatalf("go-junit cannot read the report: %v", err)
	}
	// The causes first, then the probes.
	if len(suites) != 2 || suites[0].Totals.Tests != 1 || suites[0].Totals.Failed != 1 {
		t.Fatalf("%d suites", len(suites))
	}
	s := suites[1]
	if s.Totals.Tests < 30 || s.Totals.Failed != 2 || s.Totals.Skipped == 0 {
		t.Errorf("totals %+v", s.Totals)
	}
	var timed time.Duration
	for _, c := range s.Tests {
		timed += c.Duration
		if c.Status == junit.StatusFailed && (c.Classname != "getSKU" || c.Error == nil) {
			t.Errorf("failed test %s/%s: %v", c.Classname, c.Name, c.Error)
		}
	}
	if timed <= 0 || s.Totals.Duration < timed/2 {
		t.Errorf("test cases carry %s, the suite %s", timed, s.Totals.Duration)
	}
	var doc struct {
		Suite struct {
			Timestamp string `xml:"timestamp,attr"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal([]byte(stdout), &doc); err != nil {
		t.Fatal(err)
	}
	ts, err := time.Parse("2006-01-02T15:04:05", doc.Suite.Timestamp)
	if err != nil || ts.Before(before) || ts.After(time.Now().UTC()) {
		t.Errorf("suite timestamp %q (%v) is not when the check ran", doc.Suite.Timestamp, err)
	}
}
