package deploy_test

// Checks of the monitoring assets under deploy/ (docs/observability.md):
// alert rules, dashboard queries, runbook links and scrape configuration.

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v4"

	"github.com/korral/storelink/internal/e2etest"
)

// metricsToken is the metrics token the Kubernetes manifest's configuration uses.
const metricsToken = "metrics-scrape-token-0123456789abcdef"

const (
	rulesFile     = "deploy/prometheus/storelink-mcp-rules.yaml"
	dashboardFile = "deploy/grafana/storelink-mcp.json"
	scrapeFile    = "deploy/prometheus/prometheus-kubernetes.yaml"
)

type alertRules struct {
	Groups []struct {
		Name  string `yaml:"name"`
		Rules []struct {
			Alert       string            `yaml:"alert"`
			Expr        string            `yaml:"expr"`
			Annotations map[string]string `yaml:"annotations"`
		} `yaml:"rules"`
	} `yaml:"groups"`
}

func readRules(t *testing.T) alertRules {
	t.Helper()
	b, err := os.ReadFile(e2etest.Path(t, rulesFile))
	if err != nil {
		t.Fatal(err)
	}
	var r alertRules
	if err := yaml.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	return r
}

// dashboardExprs is every PromQL expression of the dashboard's panels.
func dashboardExprs(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile(e2etest.Path(t, dashboardFile))
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Panels []struct {
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatalf("%s: %v", dashboardFile, err)
	}
	var out []string
	for _, p := range d.Panels {
		if len(p.Targets) == 0 {
			t.Errorf("panel %q queries nothing", p.Title)
		}
		for _, tg := range p.Targets {
			out = append(out, tg.Expr)
		}
	}
	return out
}

// metricName finds metric names in PromQL; ours begin with storelink_ or mcp_.
var metricName = regexp.MustCompile(`\b(?:storelink|mcp)_[a-z0-9_]+\b`)

// exportedFamilies scrapes a real server's /metrics after calls that make
// every family appear, and returns the sample and label names.
func exportedFamilies(t *testing.T) (map[string]bool, map[string]bool) {
	t.Helper()
	w := e2etest.NewWorld(t)
	p := e2etest.StartHTTP(t, w.Env("ALLOW_WRITES=true", "WRITE_APPROVAL=required"), "--metrics", "127.0.0.1:0")
	// A 2025-11-25 session: only a session feeds the session histogram.
	cs := p.ConnectAt("", "deploy-metrics", "2025-11-25")
	if env, err := e2etest.CallHTTP(t, cs, "korral_raise_replenishment_order", e2etest.Order(24, "confirm", true)); err != nil || env["ok"] != true {
		t.Fatalf("staged order: %v %v", err, env)
	}
	// A tool error and a refused call, for the rejected-calls counter.
	_, _ = e2etest.CallHTTP(t, cs, "korral_check_stock_risk", map[string]any{"store_id": "999", "sku": "8847291"})
	_, _ = e2etest.CallHTTP(t, cs, "korral_made_up", map[string]any{})
	_ = cs.Close()
	url := "http://" + p.MetricsAddr(t) + "/metrics"
	families, labels := map[string]bool{}, map[string]bool{}
	label := regexp.MustCompile(`([a-z_]+)="`)
	deadline := time.Now().Add(15 * time.Second)
	for {
		resp, err := http.Get(url)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		for _, line := range strings.Split(string(b), "\n") {
			if line == "" || strings.HasPrefix(line, "#") {
				continue
			}
			name, rest, _ := strings.Cut(line, "{")
			name, _, _ = strings.Cut(name, " ")
			families[name] = true
			for _, m := range label.FindAllStringSubmatch(rest, -1) {
				labels[m[1]] = true
			}
		}
		// The session ends on the server shortly after the client leaves.
		if families["mcp_server_session_duration_seconds_count"] || time.Now().After(deadline) {
			return families, labels
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// headingAnchors are the GitHub anchors of a Markdown file's headings.
func headingAnchors(t *testing.T, path string) map[string]bool {
	t.Helper()
	b, err := os.ReadFile(e2etest.Path(t, path))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	drop := regexp.MustCompile("[^a-z0-9 _-]")
	for _, line := range strings.Split(string(b), "\n") {
		if h, ok := strings.CutPrefix(line, "#"); ok {
			h = strings.TrimLeft(h, "#")
			out[strings.ReplaceAll(drop.ReplaceAllString(strings.ToLower(strings.TrimSpace(h)), ""), " ", "-")] = true
		}
	}
	return out
}

func TestDeployAlertRulesPassPromtool(t *testing.T) {
	promtool := e2etest.NeedTool(t, "promtool", "prometheus")
	out, err := exec.Command(promtool, "check", "rules", e2etest.Path(t, rulesFile)).CombinedOutput()
	if err != nil {
		t.Fatalf("promtool check rules %s: %v\n%s", rulesFile, err, out)
	}
}

// TestDeployMetricsAssets: alerts link to runbooks, queried metrics are
// exported and documented, and scraping finds the manifest's pods.
func TestDeployMetricsAssets(t *testing.T) {
	observability, err := os.ReadFile(e2etest.Path(t, "docs/observability.md"))
	if err != nil {
		t.Fatal(err)
	}
	exprs := checkAlertRunbooks(t, string(observability))
	checkQueriedMetrics(t, append(exprs, dashboardExprs(t)...), string(observability))
	checkScrapeFindsThePods(t)
}

// checkAlertRunbooks checks each expected alert links to a listed section of
// docs/operations.md; it returns the alerts' expressions.
func checkAlertRunbooks(t *testing.T, observability string) []string {
	t.Helper()
	rules := readRules(t)
	anchors := headingAnchors(t, "docs/operations.md")
	var exprs []string
	wantAlerts := []string{"StoreLinkBreakerOpen", "StoreLinkOrderOutcomeUnknown", "StoreLinkApprovalsAboutToLapse", "StoreLinkErrorRate", "StoreLinkAuditWriteFailures"}
	var alerts []string
	for _, g := range rules.Groups {
		for _, r := range g.Rules {
			alerts = append(alerts, r.Alert)
			exprs = append(exprs, r.Expr)
			link := r.Annotations["runbook_url"]
			anchor, ok := strings.CutPrefix(link, "docs/operations.md#")
			if !ok || !anchors[anchor] {
				t.Errorf("alert %s: runbook_url %q is not a section of docs/operations.md", r.Alert, link)
			}
			if !strings.Contains(observability, "`"+r.Alert+"`") || !strings.Contains(observability, "operations.md#"+anchor) {
				t.Errorf("alert %s is not listed with its runbook in docs/observability.md", r.Alert)
			}
		}
	}
	for _, a := range wantAlerts {
		if !slices.Contains(alerts, a) {
			t.Errorf("no alert %s", a)
		}
	}
	return exprs
}

// checkQueriedMetrics checks every queried metric is exported and documented.
func checkQueriedMetrics(t *testing.T, exprs []string, observability string) {
	t.Helper()
	exported, labels := exportedFamilies(t)
	for _, e := range exprs {
		names := metricName.FindAllString(e, -1)
		if len(names) == 0 {
			t.Errorf("%q queries none of the server's metrics", e)
		}
		for _, n := range names {
			if labels[n] && !exported[n] {
				continue
			}
			if !exported[n] {
				t.Errorf("%q uses %s, which /metrics does not export", e, n)
			}
			if !strings.Contains(observability, "`"+strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(n, "_bucket"), "_count"), "_sum")+"`") {
				t.Errorf("%s is not in docs/observability.md's metrics table", n)
			}
		}
	}

}

// checkScrapeFindsThePods: the pods' annotations, port and token file match
// the scrape configuration.
func checkScrapeFindsThePods(t *testing.T) {
	t.Helper()
	objs, raw := readManifest(t)
	c := objs["Deployment"].Spec.Template.Spec.Containers[0]
	meta, _ := raw["Deployment"]["spec"].(map[string]any)["template"].(map[string]any)["metadata"].(map[string]any)
	ann, _ := meta["annotations"].(map[string]any)
	i := slices.Index(c.Args, "--metrics")
	if i < 0 || i+1 >= len(c.Args) || ann["prometheus.io/scrape"] != "true" || ann["prometheus.io/path"] != "/metrics" ||
		":"+ann["prometheus.io/port"].(string) != c.Args[i+1] {
		t.Errorf("args %q, annotations %v: the pod must be annotated for the port --metrics listens on", c.Args, ann)
	}
	tokenEnv := false
	for _, e := range c.Env {
		tokenEnv = tokenEnv || e.Name == "MCP_METRICS_TOKEN_FILE"
	}
	if !tokenEnv {
		t.Error("a non-loopback --metrics needs MCP_METRICS_TOKEN_FILE in the manifest")
	}
	b, err := os.ReadFile(e2etest.Path(t, scrapeFile))
	if err != nil {
		t.Fatal(err)
	}
	var scrape struct {
		RuleFiles     []string `yaml:"rule_files"`
		ScrapeConfigs []struct {
			JobName       string `yaml:"job_name"`
			Authorization struct {
				CredentialsFile string `yaml:"credentials_file"`
			} `yaml:"authorization"`
			Relabel []struct {
				SourceLabels []string `yaml:"source_labels"`
				Action       string   `yaml:"action"`
				Regex        string   `yaml:"regex"`
			} `yaml:"relabel_configs"`
		} `yaml:"scrape_configs"`
	}
	if err := yaml.Unmarshal(b, &scrape); err != nil {
		t.Fatal(err)
	}
	for _, f := range scrape.RuleFiles {
		if _, err := os.Stat(filepath.Join(filepath.Dir(e2etest.Path(t, scrapeFile)), f)); err != nil {
			t.Errorf("rule file %s: %v", f, err)
		}
	}
	if len(scrape.ScrapeConfigs) != 1 || scrape.ScrapeConfigs[0].Authorization.CredentialsFile == "" {
		t.Fatalf("want one scrape job with the metrics token: %+v", scrape.ScrapeConfigs)
	}
	keeps := false
	for _, r := range scrape.ScrapeConfigs[0].Relabel {
		keeps = keeps || (r.Action == "keep" && slices.Equal(r.SourceLabels, []string{"__meta_kubernetes_pod_annotation_prometheus_io_scrape"}) && r.Regex == `"true"` || r.Regex == "true")
	}
	if !keeps {
		t.Error("the scrape job does not keep the pods annotated prometheus.io/scrape")
	}
}
