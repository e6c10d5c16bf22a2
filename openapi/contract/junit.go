package contract

import (
	"encoding/xml"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// JUnit XML, in the shape CI systems read: one test case per probe, drift as
// a failure, errors as errors, skipped probes as skipped.
type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Errors   int          `xml:"errors,attr"`
	Skipped  int          `xml:"skipped,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name string `xml:"name,attr"`
	// Timestamp is when the check began, in the XSD's form: UTC, no zone.
	Timestamp  string          `xml:"timestamp,attr"`
	Time       string          `xml:"time,attr"`
	Tests      int             `xml:"tests,attr"`
	Failures   int             `xml:"failures,attr"`
	Errors     int             `xml:"errors,attr"`
	Skipped    int             `xml:"skipped,attr"`
	Properties []junitProperty `xml:"properties>property,omitempty"`
	Cases      []junitCase     `xml:"testcase"`
}

type junitProperty struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

type junitCase struct {
	ClassName string        `xml:"classname,attr"`
	Name      string        `xml:"name,attr"`
	Time      string        `xml:"time,attr"`
	Failure   *junitMessage `xml:"failure,omitempty"`
	Error     *junitMessage `xml:"error,omitempty"`
	Skipped   *junitMessage `xml:"skipped,omitempty"`
}

type junitMessage struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr,omitempty"`
	Text    string `xml:",chardata"`
}

// seconds renders milliseconds as JUnit's time attribute: seconds, with
// millisecond precision.
func seconds(ms float64) string { return strconv.FormatFloat(ms/1000, 'f', 3, 64) }

// WriteJUnit renders the report as JUnit XML.
func (r *Report) WriteJUnit(w io.Writer) error {
	suite := junitSuite{Name: "storelink-contract " + r.BaseURL, Tests: len(r.Probes),
		Timestamp: r.StartedAt.UTC().Format("2006-01-02T15:04:05"), Time: seconds(r.DurationMS),
		Failures: r.Summary.Drift, Errors: r.Summary.Error, Skipped: r.Summary.Skipped,
		Properties: []junitProperty{
			{Name: "base_url", Value: r.BaseURL},
			{Name: "contract_version", Value: r.ContractVersion},
			{Name: "store", Value: r.Store},
			{Name: "sku", Value: r.SKU},
		}}
	if r.ContractSpec != "" {
		suite.Properties = append(suite.Properties, junitProperty{Name: "contract_spec", Value: r.ContractSpec})
	}
	if r.Aborted != "" {
		suite.Properties = append(suite.Properties, junitProperty{Name: "aborted", Value: r.Aborted})
	}
	if r.WriteStore != "" || len(r.OrdersCreated) > 0 {
		suite.Properties = append(suite.Properties, junitProperty{Name: "orders_created", Value: strconv.Itoa(len(r.OrdersCreated))})
	}
	for i, o := range r.OrdersCreated {
		suite.Properties = append(suite.Properties, junitProperty{Name: fmt.Sprintf("order_created.%d", i+1), Value: o.String()})
	}
	for _, c := range r.Coverage {
		v := c.Status
		if c.Why != "" {
			v += ": " + c.Why
		}
		suite.Properties = append(suite.Properties, junitProperty{Name: "coverage." + c.Operation, Value: v})
	}
	// The causes lead: one failing case each, so a CI system lists each
	// departure once, however many probes it broke.
	var causes *junitSuite
	if len(r.Causes) > 0 {
		causes = &junitSuite{Name: "storelink-contract causes " + r.BaseURL, Tests: len(r.Causes), Failures: len(r.Causes),
			Timestamp: suite.Timestamp, Time: "0.000"}
		for _, c := range r.Causes {
			text := fmt.Sprintf("seen %s on %s\n", times(c.Count), strings.Join(c.Operations, ", "))
			for _, e := range c.Examples {
				text += "example: " + e + "\n"
			}
			causes.Cases = append(causes.Cases, junitCase{ClassName: "cause", Name: c.Text, Time: "0.000",
				Failure: &junitMessage{Message: c.Text, Type: "cause", Text: text}})
		}
	}
	for _, p := range r.Probes {
		c := junitCase{ClassName: p.Operation, Name: p.Endpoint + " " + probeName(p), Time: seconds(p.DurationMS)}
		var text strings.Builder
		if p.Request != "" {
			fmt.Fprintf(&text, "request: %s (%s)\n", p.Request, p.Key)
		}
		fmt.Fprintf(&text, "expected: %s, got: %d\n", expectedText(p), p.Got)
		if p.Assumption != "" {
			fmt.Fprintf(&text, "assumes: %s\n", p.Assumption)
		}
		for _, f := range p.Findings {
			text.WriteString(describe(f) + "\n")
			for _, d := range f.Details {
				text.WriteString("  " + d + "\n")
			}
		}
		msg := &junitMessage{Message: p.Detail, Text: text.String()}
		switch p.Verdict {
		case Drift:
			msg.Type = "drift"
			c.Failure = msg
		case Error:
			msg.Type = "error"
			c.Error = msg
		case Skipped:
			c.Skipped = &junitMessage{Message: p.Detail}
		}
		suite.Cases = append(suite.Cases, c)
	}
	doc := junitSuites{Name: "storelink-contract", Tests: suite.Tests, Failures: suite.Failures,
		Errors: suite.Errors, Skipped: suite.Skipped, Suites: []junitSuite{suite}}
	if causes != nil {
		doc.Suites = []junitSuite{*causes, suite}
		doc.Tests += causes.Tests
		doc.Failures += causes.Failures
	}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}
