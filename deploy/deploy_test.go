package deploy_test

// Checks of the deployment files under deploy/ (docs/operations.md): the
// systemd unit, the Kubernetes manifest's shape, and that the server accepts
// the manifest's arguments and environment.

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v4"

	"github.com/korral/storelink/internal/e2etest"
)

// documented reports whether the README names a variable in backquotes.
func documented(t *testing.T, name string) bool {
	t.Helper()
	readme, err := os.ReadFile(e2etest.Path(t, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	return bytes.Contains(readme, []byte("`"+name+"`"))
}

func TestDeploySystemdUnitVerifies(t *testing.T) {
	unit, err := os.ReadFile(e2etest.Path(t, "deploy/systemd/storelink-mcp.service"))
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range regexp.MustCompile(`(?m)^Environment=([A-Z_]+)=`).FindAllSubmatch(unit, -1) {
		if !documented(t, string(m[1])) {
			t.Errorf("the unit sets %s, which the README does not document", m[1])
		}
	}
	if _, err := exec.LookPath("systemd-analyze"); err != nil {
		t.Skip("systemd-analyze is not installed (Debian package systemd; .ci/run installs it)")
	}
	// verify needs ExecStart's program to exist: point it at the binary under test.
	const installed = "/usr/local/bin/storelink-mcp"
	if !bytes.Contains(unit, []byte("ExecStart="+installed+" ")) {
		t.Fatalf("the unit does not start %s", installed)
	}
	copyPath := filepath.Join(t.TempDir(), "storelink-mcp.service")
	if err := os.WriteFile(copyPath, bytes.ReplaceAll(unit, []byte(installed), []byte(e2etest.Binary(t))), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("systemd-analyze", "verify", copyPath).CombinedOutput()
	if err != nil || len(out) > 0 {
		t.Fatalf("systemd-analyze verify: %v\n%s", err, out)
	}
}

// k8sObject is the part of a Kubernetes object the checks read.
type k8sObject struct {
	APIVersion string `yaml:"apiVersion"`
	Kind       string `yaml:"kind"`
	Metadata   struct {
		Name   string            `yaml:"name"`
		Labels map[string]string `yaml:"labels"`
	} `yaml:"metadata"`
	Spec struct {
		Replicas *int `yaml:"replicas"`
		Strategy struct {
			Type string `yaml:"type"`
		} `yaml:"strategy"`
		Selector struct {
			MatchLabels map[string]string `yaml:"matchLabels"`
		} `yaml:"selector"`
		Template struct {
			Metadata struct {
				Labels map[string]string `yaml:"labels"`
			} `yaml:"metadata"`
			Spec podSpec `yaml:"spec"`
		} `yaml:"template"`
		Ports []struct {
			TargetPort string `yaml:"targetPort"`
		} `yaml:"ports"`
	} `yaml:"spec"`
}

type probe struct {
	HTTPGet struct {
		Path string `yaml:"path"`
		Port string `yaml:"port"`
	} `yaml:"httpGet"`
}

type podSpec struct {
	SecurityContext struct {
		RunAsNonRoot bool `yaml:"runAsNonRoot"`
		RunAsUser    int  `yaml:"runAsUser"`
	} `yaml:"securityContext"`
	Containers []struct {
		Name  string   `yaml:"name"`
		Image string   `yaml:"image"`
		Args  []string `yaml:"args"`
		Ports []struct {
			Name          string `yaml:"name"`
			ContainerPort int    `yaml:"containerPort"`
		} `yaml:"ports"`
		Env []struct {
			Name  string `yaml:"name"`
			Value string `yaml:"value"`
		} `yaml:"env"`
		ReadinessProbe  probe `yaml:"readinessProbe"`
		LivenessProbe   probe `yaml:"livenessProbe"`
		SecurityContext struct {
			AllowPrivilegeEscalation *bool `yaml:"allowPrivilegeEscalation"`
			ReadOnlyRootFilesystem   bool  `yaml:"readOnlyRootFilesystem"`
			Capabilities             struct {
				Drop []string `yaml:"drop"`
			} `yaml:"capabilities"`
		} `yaml:"securityContext"`
		VolumeMounts []struct {
			Name      string `yaml:"name"`
			MountPath string `yaml:"mountPath"`
		} `yaml:"volumeMounts"`
	} `yaml:"containers"`
	Volumes []struct {
		Name   string `yaml:"name"`
		Secret *struct {
			SecretName string `yaml:"secretName"`
		} `yaml:"secret"`
		PersistentVolumeClaim *struct {
			ClaimName string `yaml:"claimName"`
		} `yaml:"persistentVolumeClaim"`
	} `yaml:"volumes"`
}

func readManifest(t *testing.T) (map[string]k8sObject, map[string]map[string]any) {
	t.Helper()
	f, err := os.Open(e2etest.Path(t, "deploy/kubernetes/storelink-mcp.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	typed, raw := map[string]k8sObject{}, map[string]map[string]any{}
	dec := yaml.NewDecoder(f)
	for {
		var node yaml.Node
		if err := dec.Decode(&node); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		var o k8sObject
		var m map[string]any
		if err := node.Decode(&o); err != nil {
			t.Fatal(err)
		}
		if err := node.Decode(&m); err != nil {
			t.Fatal(err)
		}
		if o.APIVersion == "" || o.Kind == "" || o.Metadata.Name == "" {
			t.Fatalf("an object without apiVersion, kind or metadata.name: %v", m)
		}
		typed[o.Kind], raw[o.Kind] = o, m
	}
	return typed, raw
}

func TestDeployKubernetesManifest(t *testing.T) {
	objs, raw := readManifest(t)
	for _, kind := range []string{"ServiceAccount", "PersistentVolumeClaim", "Deployment", "Service"} {
		if _, ok := objs[kind]; !ok {
			t.Fatalf("no %s in the manifest", kind)
		}
	}
	d := objs["Deployment"]
	// One replica and Recreate: the SQLite ledger must never be open in two pods.
	if d.Spec.Replicas == nil || *d.Spec.Replicas != 1 || d.Spec.Strategy.Type != "Recreate" {
		t.Errorf("replicas %v strategy %q, want 1 and Recreate", d.Spec.Replicas, d.Spec.Strategy.Type)
	}
	for k, v := range d.Spec.Selector.MatchLabels {
		if d.Spec.Template.Metadata.Labels[k] != v {
			t.Errorf("selector %s=%s does not match the pod labels", k, v)
		}
	}
	pod := d.Spec.Template.Spec
	if !pod.SecurityContext.RunAsNonRoot || pod.SecurityContext.RunAsUser != 65532 {
		t.Errorf("pod securityContext %+v, want runAsNonRoot and the image's uid 65532", pod.SecurityContext)
	}
	if len(pod.Containers) != 1 {
		t.Fatalf("%d containers, want 1", len(pod.Containers))
	}
	c := pod.Containers[0]
	sc := c.SecurityContext
	if sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation || !sc.ReadOnlyRootFilesystem || !slices.Equal(sc.Capabilities.Drop, []string{"ALL"}) {
		t.Errorf("container securityContext %+v, want no privilege escalation, a read-only root and all capabilities dropped", sc)
	}
	if c.ReadinessProbe.HTTPGet.Path != "/readyz" || c.LivenessProbe.HTTPGet.Path != "/healthz" {
		t.Errorf("probes on %q and %q, want /readyz and /healthz", c.ReadinessProbe.HTTPGet.Path, c.LivenessProbe.HTTPGet.Path)
	}
	// The MCP port and the metrics port named in the pod's annotations.
	ports := map[string]int{}
	for _, p := range c.Ports {
		ports[p.Name] = p.ContainerPort
	}
	if len(c.Ports) != 2 || ports["http"] == 0 || ports["metrics"] == 0 || c.ReadinessProbe.HTTPGet.Port != "http" || c.LivenessProbe.HTTPGet.Port != "http" ||
		!slices.Contains(c.Args, ":"+strconv.Itoa(ports["http"])) {
		t.Errorf("ports %+v, args %q: the probes and --http must use the container's http port", c.Ports, c.Args)
	}
	if svc := objs["Service"]; len(svc.Spec.Ports) != 1 || svc.Spec.Ports[0].TargetPort != "http" {
		t.Errorf("the Service targets %+v, want the container port \"http\" alone", svc.Spec.Ports)
	}
	selector, _ := raw["Service"]["spec"].(map[string]any)["selector"].(map[string]any)
	for k, v := range selector {
		if d.Spec.Template.Metadata.Labels[k] != v {
			t.Errorf("the Service selects %s=%v, which the pods do not carry", k, v)
		}
	}
	volumes := map[string]bool{}
	for _, v := range pod.Volumes {
		volumes[v.Name] = true
		if v.PersistentVolumeClaim != nil && v.PersistentVolumeClaim.ClaimName != objs["PersistentVolumeClaim"].Metadata.Name {
			t.Errorf("volume %s claims %q, which the manifest does not create", v.Name, v.PersistentVolumeClaim.ClaimName)
		}
	}
	mounts := map[string]string{}
	for _, m := range c.VolumeMounts {
		if !volumes[m.Name] {
			t.Errorf("mount of undeclared volume %q", m.Name)
		}
		mounts[m.MountPath] = m.Name
	}
	// Every file the environment names is on a mounted volume, and every
	// variable is documented in the README.
	for _, e := range c.Env {
		if !documented(t, e.Name) {
			t.Errorf("env %s is not documented in the README", e.Name)
		}
		if strings.HasPrefix(e.Value, "/") && mounts[filepath.Dir(e.Value)] == "" {
			t.Errorf("env %s=%s: no volume is mounted at %s", e.Name, e.Value, filepath.Dir(e.Value))
		}
	}
}

// TestDeployKubernetesConfigurationStarts runs the server with the
// manifest's arguments and environment (files, StoreLink and listen address
// replaced locally) and probes it as the kubelet would.
func TestDeployKubernetesConfigurationStarts(t *testing.T) {
	objs, _ := readManifest(t)
	c := objs["Deployment"].Spec.Template.Spec.Containers[0]
	w := e2etest.NewWorld(t)
	files := map[string]string{
		"/etc/storelink-mcp/keyring.json":        w.KeyringPath,
		"/etc/storelink-mcp/tokens":              filepath.Join(w.Dir, "tokens"),
		"/etc/storelink-mcp/approval-credential": filepath.Join(w.Dir, "approval-credential"),
		"/var/lib/storelink-mcp/state.db":        w.StatePath,
		"/etc/storelink-mcp/metrics-token":       filepath.Join(w.Dir, "metrics-token"),
	}
	if err := os.WriteFile(files["/etc/storelink-mcp/metrics-token"], []byte(metricsToken+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	e2etest.WriteTokenFile(t, files["/etc/storelink-mcp/tokens"], "dairy "+e2etest.TokenDairy+"\n", time.Now())
	if err := os.WriteFile(files["/etc/storelink-mcp/approval-credential"], []byte("approver-0123456789abcdef\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	env := []string{"HOME=" + w.Dir}
	for _, e := range c.Env {
		v := e.Value
		switch {
		case e.Name == "UPSTREAM_BASE_URL":
			v = w.Mock.URL
		case strings.HasPrefix(v, "/"):
			local, ok := files[v]
			if !ok {
				t.Fatalf("env %s=%s: a file this test does not provide", e.Name, v)
			}
			v = local
		}
		env = append(env, e.Name+"="+v)
	}
	args := slices.Clone(c.Args)
	i := slices.Index(args, "--http")
	if i < 0 || i+1 >= len(args) {
		t.Fatalf("args %q have no --http address", args)
	}
	args[i+1] = "127.0.0.1:0"
	if i := slices.Index(args, "--metrics"); i >= 0 && i+1 < len(args) {
		args[i+1] = "127.0.0.1:0"
	}
	cmd := exec.Command(e2etest.Binary(t), args...)
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH")}, env...)
	p := e2etest.LaunchHTTP(t, cmd)
	for _, pr := range []probe{c.ReadinessProbe, c.LivenessProbe} {
		resp, err := http.Get(p.Base + pr.HTTPGet.Path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("GET %s = %d, want 200", pr.HTTPGet.Path, resp.StatusCode)
		}
	}
}
