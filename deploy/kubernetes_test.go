package deploy

import (
	"bytes"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"maps"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	"github.com/santhosh-tekuri/jsonschema/v6"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"
)

// kedaVersion is the KEDA release the ScaledObject and
// TriggerAuthentication are validated against: its CRDs' OpenAPI schemas
// and its Kafka scaler's metadata keys, read from the release's Go module.
const kedaVersion = "v2.21.0"

// measuredPeakRSS is the peak resident set of neardup serve with the
// kit's ConfigMap, 148 MiB by `go run ./measure -docs 20000`
// (docs/operations.md, "Memory of a member"); the Deployment's memory
// request must cover it.
const measuredPeakRSS = 148 << 20

// kit is a rendered kustomization, its objects decoded into their types.
type kit struct {
	configMap   corev1.ConfigMap
	deployment  appsv1.Deployment
	pdb         policyv1.PodDisruptionBudget
	service     corev1.Service
	netpol      networkingv1.NetworkPolicy
	podMonitor  monitoringv1.PodMonitor
	rule        monitoringv1.PrometheusRule
	scaled      map[string]any // keda.sh ScaledObject, schema-validated
	triggerAuth map[string]any // keda.sh TriggerAuthentication, if any
	kinds       []string
}

// strict decodes YAML into v, rejecting unknown and duplicate fields: a
// misspelt field fails here instead of being dropped by the API server.
func strict(t *testing.T, what string, y []byte, v any) {
	t.Helper()
	if err := yaml.UnmarshalStrict(y, v); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// render builds a kustomization with kustomize (what kubectl apply -k
// runs) and decodes every object strictly into its upstream API type,
// or validates it against its CRD's schema.
func render(t *testing.T, dir string) kit {
	t.Helper()
	rm, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(filesys.MakeFsOnDisk(), dir)
	if err != nil {
		t.Fatalf("kustomize build %s: %v", dir, err)
	}
	var k kit
	for _, r := range rm.Resources() {
		y, err := r.AsYAML()
		if err != nil {
			t.Fatal(err)
		}
		gvk := r.GetGvk()
		id := gvk.ApiVersion() + " " + gvk.Kind + " " + r.GetName()
		k.kinds = append(k.kinds, gvk.Kind)
		switch gvk.ApiVersion() + "/" + gvk.Kind {
		case "v1/ConfigMap":
			strict(t, id, y, &k.configMap)
		case "apps/v1/Deployment":
			strict(t, id, y, &k.deployment)
		case "policy/v1/PodDisruptionBudget":
			strict(t, id, y, &k.pdb)
		case "v1/Service":
			strict(t, id, y, &k.service)
		case "networking.k8s.io/v1/NetworkPolicy":
			strict(t, id, y, &k.netpol)
		case "monitoring.coreos.com/v1/PodMonitor":
			strict(t, id, y, &k.podMonitor)
		case "monitoring.coreos.com/v1/PrometheusRule":
			strict(t, id, y, &k.rule)
		case "keda.sh/v1alpha1/ScaledObject":
			k.scaled = validateCRD(t, id, y, "keda.sh_scaledobjects.yaml")
		case "keda.sh/v1alpha1/TriggerAuthentication":
			k.triggerAuth = validateCRD(t, id, y, "keda.sh_triggerauthentications.yaml")
		default:
			t.Errorf("%s: no validator for this kind", id)
		}
	}
	slices.Sort(k.kinds)
	return k
}

// kedaDir is the KEDA release's module, downloaded by the go command.
func kedaDir(t *testing.T) string {
	t.Helper()
	cmd := exec.Command("go", "mod", "download", "-json", "github.com/kedacore/keda/v2@"+kedaVersion)
	cmd.Dir = t.TempDir() // outside any module: nothing is added to go.mod
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go mod download keda: %v\n%s", err, out)
	}
	var m struct{ Dir, Error string }
	if err := json.Unmarshal(out, &m); err != nil || m.Dir == "" {
		t.Fatalf("go mod download keda: %v %s", err, m.Error)
	}
	return m.Dir
}

// validateCRD validates an object against the OpenAPI schema of KEDA's
// CRD (as the API server does), with unknown fields rejected instead of
// pruned, and its metadata strictly as ObjectMeta.
func validateCRD(t *testing.T, id string, y []byte, crdFile string) map[string]any {
	t.Helper()
	var crd struct {
		Spec struct {
			Versions []struct {
				Name   string
				Schema struct {
					OpenAPIV3Schema map[string]any `json:"openAPIV3Schema"`
				}
			}
		}
	}
	if err := yaml.Unmarshal(readFile(t, filepath.Join(kedaDir(t), "config", "crd", "bases", crdFile)), &crd); err != nil {
		t.Fatal(err)
	}
	var schema map[string]any
	for _, v := range crd.Spec.Versions {
		if v.Name == "v1alpha1" {
			schema = v.Schema.OpenAPIV3Schema
		}
	}
	if schema == nil {
		t.Fatalf("%s: no v1alpha1 schema", crdFile)
	}
	closeObjects(schema)
	c := jsonschema.NewCompiler()
	if err := c.AddResource(crdFile, schema); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile(crdFile)
	if err != nil {
		t.Fatal(err)
	}
	var obj map[string]any
	if err := yaml.Unmarshal(y, &obj); err != nil {
		t.Fatal(err)
	}
	// JSON numbers, as the API server sees them.
	j, err := json.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(j))
	if err != nil {
		t.Fatal(err)
	}
	if err := sch.Validate(inst); err != nil {
		t.Errorf("%s against KEDA %s %s: %v", id, kedaVersion, crdFile, err)
	}
	var meta struct {
		APIVersion string            `json:"apiVersion"`
		Kind       string            `json:"kind"`
		Metadata   metav1.ObjectMeta `json:"metadata"`
		Spec       any               `json:"spec"`
	}
	strict(t, id, y, &meta)
	return obj
}

// closeObjects sets additionalProperties: false on every object schema
// that lists its properties and does not preserve unknown fields.
func closeObjects(s any) {
	switch s := s.(type) {
	case map[string]any:
		_, props := s["properties"]
		_, addl := s["additionalProperties"]
		if props && !addl && s["x-kubernetes-preserve-unknown-fields"] != true {
			s["additionalProperties"] = false
		}
		for _, v := range s {
			closeObjects(v)
		}
	case []any:
		for _, v := range s {
			closeObjects(v)
		}
	}
}

// field returns the value at a dotted path of a decoded object ("spec.triggers").
func field(obj map[string]any, p string) any {
	var v any = obj
	for _, k := range strings.Split(p, ".") {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}

// kedaParam is one parameter of KEDA's Kafka scaler.
type kedaParam struct {
	orders   []string // triggerMetadata, resolvedEnv, authParams
	required bool
	enum     []string
}

// kafkaScalerParams reads the parameters of KEDA's Kafka scaler from the
// `keda:"name=...,order=...,enum=..."` tags of its metadata struct.
func kafkaScalerParams(t *testing.T) map[string]kedaParam {
	t.Helper()
	file := filepath.Join(kedaDir(t), "pkg", "scalers", "kafka_scaler.go")
	f, err := parser.ParseFile(token.NewFileSet(), file, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	params := map[string]kedaParam{}
	ast.Inspect(f, func(n ast.Node) bool {
		ts, ok := n.(*ast.TypeSpec)
		if !ok || ts.Name.Name != "kafkaMetadata" {
			return true
		}
		for _, fld := range ts.Type.(*ast.StructType).Fields.List {
			if fld.Tag == nil {
				continue
			}
			tag, _ := strconv.Unquote(fld.Tag.Value)
			kt, ok := reflect.StructTag(tag).Lookup("keda")
			if !ok {
				continue
			}
			var name string
			p := kedaParam{required: true}
			for _, part := range strings.Split(kt, ",") {
				k, v, _ := strings.Cut(part, "=")
				switch k {
				case "name":
					name = v
				case "order":
					p.orders = strings.Split(v, ";")
				case "enum":
					p.enum = strings.Split(v, ";")
				case "optional", "default":
					p.required = false
				}
			}
			params[name] = p
		}
		return false
	})
	if len(params) < 20 || params["lagThreshold"].orders == nil {
		t.Fatalf("%s: read %d Kafka scaler parameters; has KEDA changed its tags?", file, len(params))
	}
	return params
}

// The base kit: every object decodes strictly into its upstream type or
// validates against its CRD, and the objects agree with each other, with
// neardup's configuration keys and with its measured footprint.
func TestKubernetesKit(t *testing.T) {
	k := render(t, "kubernetes")
	if want := []string{"ConfigMap", "Deployment", "NetworkPolicy", "PodDisruptionBudget", "PodMonitor", "PrometheusRule", "ScaledObject", "Service"}; !slices.Equal(k.kinds, want) {
		t.Errorf("kinds %v, want %v", k.kinds, want)
	}
	checkKit(t, k)
	if k.triggerAuth != nil {
		t.Error("the base kit has a TriggerAuthentication: Kafka without SASL needs none")
	}
}

// The kit with the kafka-sasl component: the SASL credentials reach
// neardup from the Secret, and KEDA authenticates with the same user.
func TestKubernetesKitSASL(t *testing.T) {
	k := render(t, "testdata/kustomize-sasl")
	checkKit(t, k)
	env := map[string]corev1.EnvVar{}
	for _, e := range k.deployment.Spec.Template.Spec.Containers[0].Env {
		env[e.Name] = e
	}
	for _, name := range []string{"NEARDUP_KAFKA_SASL_USER", "NEARDUP_KAFKA_SASL_PASSWORD"} {
		if e, ok := env[name]; !ok || e.ValueFrom == nil || e.ValueFrom.SecretKeyRef == nil {
			t.Errorf("%s does not come from a Secret", name)
		}
	}
	if k.triggerAuth == nil {
		t.Fatal("no TriggerAuthentication")
	}
	ref, _ := field(k.scaled, "spec.triggers").([]any)[0].(map[string]any)["authenticationRef"].(map[string]any)
	if ref == nil || ref["name"] != field(k.triggerAuth, "metadata.name") {
		t.Errorf("the trigger's authenticationRef %v does not name the TriggerAuthentication", ref)
	}
	params := kafkaScalerParams(t)
	secrets := exampleSecrets(t)
	for _, r := range field(k.triggerAuth, "spec.secretTargetRef").([]any) {
		r := r.(map[string]any)
		p, ok := params[r["parameter"].(string)]
		if !ok || !slices.Contains(p.orders, "authParams") {
			t.Errorf("TriggerAuthentication parameter %q is no authParam of KEDA's Kafka scaler", r["parameter"])
		}
		s, ok := secrets[r["name"].(string)]
		if _, has := s.StringData[r["key"].(string)]; !ok || !has {
			t.Errorf("TriggerAuthentication reads %s/%s, which secrets.example.yaml does not define", r["name"], r["key"])
		} else if len(p.enum) > 0 && !slices.Contains(p.enum, s.StringData[r["key"].(string)]) {
			t.Errorf("secrets.example.yaml %s/%s = %q: KEDA accepts %v", r["name"], r["key"], s.StringData[r["key"].(string)], p.enum)
		}
	}
}

// exampleSecrets decodes secrets.example.yaml strictly.
func exampleSecrets(t *testing.T) map[string]corev1.Secret {
	t.Helper()
	out := map[string]corev1.Secret{}
	for i, doc := range bytes.Split(readFile(t, "kubernetes/secrets.example.yaml"), []byte("\n---\n")) {
		var s corev1.Secret
		strict(t, fmt.Sprintf("secrets.example.yaml document %d", i), doc, &s)
		if s.Kind != "Secret" || s.APIVersion != "v1" {
			t.Errorf("secrets.example.yaml document %d is a %s %s", i, s.APIVersion, s.Kind)
		}
		out[s.Name] = s
	}
	return out
}

func checkKit(t *testing.T, k kit) {
	t.Helper()
	d := k.deployment
	pod := d.Spec.Template
	if len(pod.Spec.Containers) != 1 {
		t.Fatalf("%d containers, want 1", len(pod.Spec.Containers))
	}
	c := pod.Spec.Containers[0]
	podLabels := labels.Set(pod.Labels)
	selects := func(what string, sel *metav1.LabelSelector) {
		t.Helper()
		s, err := metav1.LabelSelectorAsSelector(sel)
		if err != nil || s.Empty() || !s.Matches(podLabels) {
			t.Errorf("%s selector %v does not select the pods %v (%v)", what, sel, pod.Labels, err)
		}
	}
	selects("Deployment", d.Spec.Selector)
	selects("PodDisruptionBudget", k.pdb.Spec.Selector)
	selects("PodMonitor", &k.podMonitor.Spec.Selector)
	selects("Service", &metav1.LabelSelector{MatchLabels: k.service.Spec.Selector})

	// Configuration: the ConfigMap's variables are neardup keys, valid
	// together with the Secrets' values, and no secret is among them.
	if len(c.EnvFrom) != 1 || c.EnvFrom[0].ConfigMapRef == nil || c.EnvFrom[0].ConfigMapRef.Name != k.configMap.Name {
		t.Errorf("the container's envFrom %v is not the ConfigMap %s", c.EnvFrom, k.configMap.Name)
	}
	for _, key := range secretKeys {
		if _, ok := k.configMap.Data[envName(key)]; ok {
			t.Errorf("the ConfigMap sets %s, a secret: it belongs in a Secret", envName(key))
		}
	}
	credentials := regexp.MustCompile(`://[^/@\s]*:[^/@\s]*@`)
	for name, v := range k.configMap.Data {
		if credentials.MatchString(v) {
			t.Errorf("the ConfigMap's %s holds credentials", name)
		}
	}
	env := maps.Clone(k.configMap.Data)
	secrets := exampleSecrets(t)
	var gomemlimit string
	for _, e := range c.Env {
		switch {
		case e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil:
			ref := e.ValueFrom.SecretKeyRef
			v, ok := secrets[ref.Name].StringData[ref.Key]
			if !ok {
				t.Errorf("%s reads Secret %s key %s, which secrets.example.yaml does not define", e.Name, ref.Name, ref.Key)
			}
			env[e.Name] = v
		case e.ValueFrom != nil && e.ValueFrom.ResourceFieldRef != nil:
			t.Errorf("%s from %v", e.Name, e.ValueFrom.ResourceFieldRef)
		case e.Name == "GOMEMLIMIT":
			gomemlimit = e.Value
		case strings.HasPrefix(e.Name, "NEARDUP_"):
			env[e.Name] = e.Value
		}
		for _, key := range secretKeys {
			if e.Name == envName(key) && (e.ValueFrom == nil || e.ValueFrom.SecretKeyRef == nil) {
				t.Errorf("%s is not read from a Secret", e.Name)
			}
		}
	}
	if _, ok := env["NEARDUP_INDEX_URL"]; !ok {
		t.Error("NEARDUP_INDEX_URL is not set: several replicas need a shared Redis index")
	}
	effective := checkNeardupEnv(t, "Deployment environment", env)

	// Endpoints: probes on the port neardup listens on.
	_, port, err := net.SplitHostPort(effective["http.addr"])
	if err != nil {
		t.Fatalf("http.addr %q: %v", effective["http.addr"], err)
	}
	var httpPort *corev1.ContainerPort
	for i, p := range c.Ports {
		if strconv.Itoa(int(p.ContainerPort)) == port {
			httpPort = &c.Ports[i]
		}
	}
	if httpPort == nil || httpPort.Name == "" {
		t.Fatalf("no named container port for http.addr %s: %v", effective["http.addr"], c.Ports)
	}
	probe := func(what string, p *corev1.Probe, want string) {
		t.Helper()
		if p == nil || p.HTTPGet == nil {
			t.Errorf("%s probe is not an HTTP GET", what)
			return
		}
		if p.HTTPGet.Path != want || p.HTTPGet.Port.String() != httpPort.Name {
			t.Errorf("%s probe GET %s on %s, want %s on %s", what, p.HTTPGet.Path, p.HTTPGet.Port.String(), want, httpPort.Name)
		}
	}
	probe("readiness", c.ReadinessProbe, "/readyz")
	probe("liveness", c.LivenessProbe, "/healthz")
	if len(k.service.Spec.Ports) != 1 || k.service.Spec.Ports[0].TargetPort.String() != httpPort.Name {
		t.Errorf("Service ports %v do not target %s", k.service.Spec.Ports, httpPort.Name)
	}
	checkNetworkPolicy(t, k, effective, httpPort.Name)
	if eps := k.podMonitor.Spec.PodMetricsEndpoints; len(eps) != 1 || eps[0].Port == nil || *eps[0].Port != httpPort.Name || eps[0].Path != "/metrics" {
		t.Errorf("PodMonitor endpoints do not scrape /metrics on port %s: %s", httpPort.Name, mustJSON(eps))
	}

	// Shutdown: the grace period covers the shutdown deadline.
	grace := time.Duration(*pod.Spec.TerminationGracePeriodSeconds) * time.Second
	if shut := shutdownTimeout(t, effective); grace <= shut+5*time.Second {
		t.Errorf("terminationGracePeriodSeconds %v must exceed kafka.shutdown_timeout %v by more than 5s", grace, shut)
	}

	// Resources: requests from the measurements, the heap bounded.
	req, lim := c.Resources.Requests, c.Resources.Limits
	if req.Cpu().IsZero() || req.Memory().IsZero() || lim.Memory().IsZero() {
		t.Errorf("resources %v: want cpu and memory requests and a memory limit", c.Resources)
	}
	if req.Memory().Value() < measuredPeakRSS {
		t.Errorf("memory request %v is below the measured peak resident set %d MiB", req.Memory(), measuredPeakRSS>>20)
	}
	if lim.Memory().Cmp(*req.Memory()) < 0 {
		t.Errorf("memory limit %v below the request %v", lim.Memory(), req.Memory())
	}
	// GOMEMLIMIT: a soft limit the runtime keeps, below the container's
	// with room for what it does not count (docs/operations.md, "Memory
	// budget": `go run ./measure -budget` peaks within the limit with it).
	if soft, err := parseGoMemLimit(gomemlimit); err != nil || soft > lim.Memory().Value()*85/100 || soft < lim.Memory().Value()/2 {
		t.Errorf("GOMEMLIMIT %q (%v): want between 50 %% and 85 %% of the memory limit %v", gomemlimit, err, lim.Memory())
	}

	// Security: non-root, read-only, nothing extra.
	sc := c.SecurityContext
	if pod.Spec.SecurityContext == nil || pod.Spec.SecurityContext.RunAsNonRoot == nil || !*pod.Spec.SecurityContext.RunAsNonRoot ||
		sc == nil || sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem ||
		sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation || sc.Capabilities == nil || !slices.Equal(sc.Capabilities.Drop, []corev1.Capability{"ALL"}) {
		t.Errorf("security context %v / %v: want non-root, read-only root, no privilege escalation, all capabilities dropped", pod.Spec.SecurityContext, sc)
	}
	if uid := pod.Spec.SecurityContext.RunAsUser; uid == nil || strconv.FormatInt(*uid, 10)+":"+strconv.FormatInt(*pod.Spec.SecurityContext.RunAsGroup, 10) != imageUser {
		t.Errorf("runAsUser/runAsGroup differ from the image's user %s", imageUser)
	}

	// Availability: at most one member down at a time.
	if k.pdb.Spec.MaxUnavailable == nil || k.pdb.Spec.MaxUnavailable.IntValue() != 1 {
		t.Errorf("PodDisruptionBudget maxUnavailable %v, want 1", k.pdb.Spec.MaxUnavailable)
	}
	if ru := d.Spec.Strategy.RollingUpdate; ru == nil || ru.MaxUnavailable.IntValue() != 0 {
		t.Errorf("rolling update %v: want maxUnavailable 0", ru)
	}

	// Autoscaling on the group's lag, from the container's own settings.
	if field(k.scaled, "spec.scaleTargetRef.name") != d.Name || field(k.scaled, "spec.scaleTargetRef.envSourceContainerName") != c.Name {
		t.Errorf("ScaledObject targets %v", field(k.scaled, "spec.scaleTargetRef"))
	}
	minR, _ := field(k.scaled, "spec.minReplicaCount").(float64)
	maxR, _ := field(k.scaled, "spec.maxReplicaCount").(float64)
	if minR < 2 || maxR < minR {
		t.Errorf("replicas %v..%v: want at least 2 (the PodDisruptionBudget) and max >= min", minR, maxR)
	}
	triggers, _ := field(k.scaled, "spec.triggers").([]any)
	if len(triggers) != 1 {
		t.Fatalf("%d triggers, want the Kafka lag trigger", len(triggers))
	}
	tr := triggers[0].(map[string]any)
	if tr["type"] != "kafka" {
		t.Errorf("trigger type %v, want kafka", tr["type"])
	}
	md, _ := tr["metadata"].(map[string]any)
	params := kafkaScalerParams(t)
	resolved := map[string]string{}
	for key, v := range md {
		val := v.(string)
		if name, ok := strings.CutSuffix(key, "FromEnv"); ok {
			p, known := params[name]
			if !known || !slices.Contains(p.orders, "resolvedEnv") {
				t.Errorf("trigger metadata %s: KEDA's Kafka scaler reads no %s from the environment", key, name)
				continue
			}
			envVal, ok := env[val]
			if !ok {
				t.Errorf("trigger metadata %s: the container has no variable %s", key, val)
			}
			resolved[name] = envVal
			continue
		}
		p, known := params[key]
		if !known || !slices.Contains(p.orders, "triggerMetadata") {
			t.Errorf("trigger metadata %s is no parameter of KEDA %s's Kafka scaler", key, kedaVersion)
			continue
		}
		if len(p.enum) > 0 && !slices.Contains(p.enum, val) {
			t.Errorf("trigger metadata %s=%q: KEDA accepts %v", key, val, p.enum)
		}
		resolved[key] = val
	}
	for name, p := range params {
		if _, ok := resolved[name]; p.required && !ok && !slices.Contains(p.orders, "authParams") {
			t.Errorf("trigger metadata lacks %s, which KEDA's Kafka scaler requires", name)
		}
	}
	for param, key := range map[string]string{"bootstrapServers": "kafka.brokers", "consumerGroup": "kafka.group", "topic": "kafka.input_topic"} {
		if resolved[param] != effective[key] {
			t.Errorf("KEDA's %s %q differs from neardup's %s %q", param, resolved[param], key, effective[key])
		}
	}
	if lag, err := strconv.Atoi(resolved["lagThreshold"]); err != nil || lag <= 0 {
		t.Errorf("lagThreshold %q", resolved["lagThreshold"])
	}
	if resolved["allowIdleConsumers"] == "true" {
		t.Error("allowIdleConsumers: more members than partitions do nothing")
	}
	if resolved["offsetResetPolicy"] != effective["kafka.start_offset"] {
		t.Errorf("KEDA's offsetResetPolicy %q differs from kafka.start_offset %q", resolved["offsetResetPolicy"], effective["kafka.start_offset"])
	}
}

// The kit's files are all used: every YAML file under kubernetes/ is a
// resource, a component or an example, so nothing silently drops out of
// kubectl apply -k.
func TestKubernetesFilesUsed(t *testing.T) {
	var kust struct {
		Resources []string `json:"resources"`
	}
	if err := yaml.Unmarshal(readFile(t, "kubernetes/kustomization.yaml"), &kust); err != nil {
		t.Fatal(err)
	}
	used := map[string]bool{"kustomization.yaml": true, "secrets.example.yaml": true}
	for _, r := range kust.Resources {
		used[r] = true
	}
	files, err := filepath.Glob("kubernetes/*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if !used[filepath.Base(f)] {
			t.Errorf("%s is not listed in kustomization.yaml", f)
		}
	}
	if _, err := os.Stat("kubernetes/components/kafka-sasl/kustomization.yaml"); err != nil {
		t.Error(err)
	}
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return err.Error()
	}
	return string(b)
}

// parseGoMemLimit parses a GOMEMLIMIT value: bytes with an optional B,
// KiB, MiB, GiB or TiB suffix, as the Go runtime reads it.
func parseGoMemLimit(v string) (int64, error) {
	mult := int64(1)
	for _, u := range []struct {
		suffix string
		m      int64
	}{{"TiB", 1 << 40}, {"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}, {"B", 1}} {
		if n, ok := strings.CutSuffix(v, u.suffix); ok {
			v, mult = n, u.m
			break
		}
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("GOMEMLIMIT %q: want a positive number of bytes with an optional B, KiB, MiB, GiB or TiB suffix", v)
	}
	return n * mult, nil
}

// checkNetworkPolicy: the NetworkPolicy selects the Deployment's pods and
// admits ingress on the metrics port only; the admin endpoint listens on
// loopback (http.admin_addr), where no policy is needed, or not at all.
func checkNetworkPolicy(t *testing.T, k kit, effective map[string]string, httpPort string) {
	t.Helper()
	np := k.netpol.Spec
	sel, err := metav1.LabelSelectorAsSelector(&np.PodSelector)
	if err != nil || !sel.Matches(labels.Set(k.deployment.Spec.Template.Labels)) {
		t.Errorf("NetworkPolicy selector %v does not select the Deployment's pods (%v)", np.PodSelector, err)
	}
	if !slices.Equal(np.PolicyTypes, []networkingv1.PolicyType{networkingv1.PolicyTypeIngress}) {
		t.Errorf("NetworkPolicy types %v, want [Ingress]", np.PolicyTypes)
	}
	for _, rule := range np.Ingress {
		if len(rule.From) == 0 {
			t.Errorf("NetworkPolicy rule %v admits every source", rule)
		}
		if len(rule.Ports) == 0 {
			t.Errorf("NetworkPolicy rule %v admits every port", rule)
		}
		for _, p := range rule.Ports {
			if p.Port == nil || p.Port.String() != httpPort {
				t.Errorf("NetworkPolicy admits port %v, want only %s", p.Port, httpPort)
			}
		}
	}
	if a := effective["http.admin_addr"]; a != "" {
		host, _, err := net.SplitHostPort(a)
		if ip := net.ParseIP(host); err != nil || ip == nil || !ip.IsLoopback() {
			t.Errorf("http.admin_addr %q is not a loopback address", a)
		}
	}
}
