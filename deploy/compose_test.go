package deploy

import (
	"bytes"
	"context"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/compose-spec/compose-go/v2/loader"
	"github.com/compose-spec/compose-go/v2/types"
	"sigs.k8s.io/yaml"
)

const composeFile = "compose/compose.yaml"

// loadCompose loads the compose file with compose-go, the loader docker
// compose itself uses: the compose-spec JSON schema (unknown keys
// rejected), interpolation, anchors and merges, and consistency checks
// (dependencies, volumes, networks).
func loadCompose(t *testing.T) *types.Project {
	t.Helper()
	abs, err := filepath.Abs(composeFile)
	if err != nil {
		t.Fatal(err)
	}
	p, err := loader.LoadWithContext(context.Background(), types.ConfigDetails{
		WorkingDir:  filepath.Dir(abs),
		ConfigFiles: []types.ConfigFile{{Filename: abs}},
		Environment: types.Mapping{},
	}, func(o *loader.Options) { o.SetProjectName("neardup", true) })
	if err != nil {
		t.Fatalf("%s: %v", composeFile, err)
	}
	return p
}

// The compose file runs Kafka (KRaft, one node), Redis, three neardup
// members of one group on the shared Redis index, Prometheus with the
// alerting rules and Grafana with the dashboard; every neardup variable
// is a configuration key, and what the services say of each other agrees.
func TestCompose(t *testing.T) {
	p := loadCompose(t)
	want := []string{"grafana", "kafka", "kafka-init", "neardup-1", "neardup-2", "neardup-3", "prometheus", "redis"}
	if got := slices.Sorted(slices.Values(p.ServiceNames())); !slices.Equal(got, want) {
		t.Fatalf("services %v, want %v", got, want)
	}
	svc := func(name string) types.ServiceConfig {
		s, err := p.GetService(name)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	// Issue 24, point 5: Redis ran without persistence, so a restart
	// emptied the index silently. It keeps an append-only file on a
	// named volume.
	if r := svc("redis"); !slices.Contains(r.Command, "--appendonly") || r.Command[slices.Index(r.Command, "--appendonly")+1] != "yes" ||
		!slices.ContainsFunc(r.Volumes, func(v types.ServiceVolumeConfig) bool { return v.Type == types.VolumeTypeVolume && v.Target == "/data" }) {
		t.Errorf("redis: command %q, volumes %v: want --appendonly yes and a named volume at /data", r.Command, r.Volumes)
	}
	for _, s := range p.Services {
		if s.Image == "" || (!strings.Contains(s.Image, ":") && s.Build == nil) {
			t.Errorf("%s: image %q: pin a tag", s.Name, s.Image)
		}
		for _, v := range s.Volumes {
			if v.Type != types.VolumeTypeBind {
				continue
			}
			if _, err := os.Stat(v.Source); err != nil {
				t.Errorf("%s: bind mount %s: %v", s.Name, v.Source, err)
			}
			if !v.ReadOnly {
				t.Errorf("%s: bind mount %s is writable", s.Name, v.Target)
			}
		}
		for _, port := range s.Ports {
			if port.HostIP != "127.0.0.1" {
				t.Errorf("%s: port %s published on %q, want 127.0.0.1 only", s.Name, port.Published, port.HostIP)
			}
		}
	}

	kafka := svc("kafka")
	if roles := kafka.Environment["KAFKA_PROCESS_ROLES"]; roles == nil || *roles != "broker,controller" {
		t.Errorf("kafka: KAFKA_PROCESS_ROLES %v, want broker,controller (KRaft, one node)", roles)
	}
	for k := range kafka.Environment {
		if strings.Contains(k, "ZOOKEEPER") {
			t.Errorf("kafka: %s: KRaft needs no ZooKeeper", k)
		}
	}
	if kafka.HealthCheck == nil || len(kafka.HealthCheck.Test) == 0 {
		t.Error("kafka: no healthcheck for the others to wait on")
	}
	advertised := *kafka.Environment["KAFKA_ADVERTISED_LISTENERS"]
	redis := svc("redis")
	if !slices.Contains(redis.Command, "noeviction") || redis.HealthCheck == nil {
		t.Errorf("redis: command %v: the index must never be evicted (maxmemory-policy noeviction), and a healthcheck", redis.Command)
	}
	if init := svc("kafka-init"); init.DependsOn["kafka"].Condition != types.ServiceConditionHealthy ||
		!strings.Contains(strings.Join(init.Command, " "), "crawl.documents") {
		t.Errorf("kafka-init: depends on %v, command %v", init.DependsOn, init.Command)
	}

	var group, input string
	for i, name := range []string{"neardup-1", "neardup-2", "neardup-3"} {
		s := svc(name)
		if s.Build == nil || s.Build.Dockerfile != "deploy/Containerfile" {
			t.Errorf("%s: build %+v, want deploy/Containerfile", name, s.Build)
		} else if _, err := os.Stat(filepath.Join(s.Build.Context, s.Build.Dockerfile)); err != nil {
			t.Errorf("%s: %v", name, err)
		}
		if s.DependsOn["kafka-init"].Condition != types.ServiceConditionCompletedSuccessfully ||
			s.DependsOn["redis"].Condition != types.ServiceConditionHealthy {
			t.Errorf("%s: depends_on %v: want kafka-init completed and redis healthy", name, s.DependsOn)
		}
		env := map[string]string{}
		for k, v := range s.Environment {
			if v != nil {
				env[k] = *v
			}
		}
		effective := checkNeardupEnv(t, name, env)
		if s.StopGracePeriod == nil || time.Duration(*s.StopGracePeriod) <= shutdownTimeout(t, effective) {
			t.Errorf("%s: stop_grace_period %v must exceed kafka.shutdown_timeout %v", name, s.StopGracePeriod, effective["kafka.shutdown_timeout"])
		}
		if !strings.HasPrefix(effective["index.url"], "redis://redis:") {
			t.Errorf("%s: index.url %q, want the redis service (members share one index)", name, effective["index.url"])
		}
		for _, b := range strings.Split(effective["kafka.brokers"], ",") {
			if !strings.Contains(advertised, "://"+b) {
				t.Errorf("%s: broker %s is not among kafka's advertised listeners %s", name, b, advertised)
			}
		}
		if i == 0 {
			group, input = effective["kafka.group"], effective["kafka.input_topic"]
		} else if effective["kafka.group"] != group || effective["kafka.input_topic"] != input {
			t.Errorf("%s: group %s on %s, want the same as neardup-1's", name, effective["kafka.group"], effective["kafka.input_topic"])
		}
	}

	// Prometheus: the file it mounts passes promtool check config
	// (Prometheus's config loader, unknown fields rejected; with the rule
	// files it names, read from where they are mounted from), scrapes the
	// three members on http.addr's port and evaluates the kit's alerting
	// rules.
	prom := svc("prometheus")
	mounts := map[string]string{}
	for _, v := range prom.Volumes {
		mounts[v.Target] = v.Source
	}
	cfgPath := mounts["/etc/prometheus/prometheus.yml"]
	if !slices.Contains(prom.Command, "--config.file=/etc/prometheus/prometheus.yml") || cfgPath == "" {
		t.Fatalf("prometheus: command %v, mounts %v", prom.Command, mounts)
	}
	var cfg struct {
		RuleFiles     []string         `json:"rule_files"`
		ScrapeConfigs []map[string]any `json:"scrape_configs"`
	}
	if err := yaml.Unmarshal(readFile(t, cfgPath), &cfg); err != nil {
		t.Fatalf("prometheus.yml: %v", err)
	}
	t.Run("promtool", func(t *testing.T) {
		// The rule files are container paths: a copy of the file names
		// their sources on the host instead (an unmounted one fails below).
		var file map[string]any
		if err := yaml.Unmarshal(readFile(t, cfgPath), &file); err != nil {
			t.Fatal(err)
		}
		var hostRules []string
		for _, rf := range cfg.RuleFiles {
			if src, ok := mounts[rf]; ok {
				hostRules = append(hostRules, src)
			}
		}
		file["rule_files"] = hostRules
		y, err := yaml.Marshal(file)
		if err != nil {
			t.Fatal(err)
		}
		hostCfg := filepath.Join(t.TempDir(), "prometheus.yml")
		if err := os.WriteFile(hostCfg, y, 0o644); err != nil {
			t.Fatal(err)
		}
		promtool(t, "check", "config", hostCfg)
	})
	for _, rf := range cfg.RuleFiles {
		src, ok := mounts[rf]
		abs, _ := filepath.Abs(rulesFile)
		if !ok || src != abs {
			t.Errorf("prometheus.yml rule file %s is mounted from %q, want %s", rf, src, abs)
		}
	}
	if len(cfg.RuleFiles) != 1 {
		t.Errorf("rule files %v, want the kit's alerts", cfg.RuleFiles)
	}
	var targets []string
	for _, sc := range cfg.ScrapeConfigs {
		var job struct {
			JobName       string `json:"job_name"`
			MetricsPath   string `json:"metrics_path"`
			StaticConfigs []struct {
				Targets []string `json:"targets"`
			} `json:"static_configs"`
		}
		if err := yaml.Unmarshal([]byte(mustJSON(sc)), &job); err != nil {
			t.Fatal(err)
		}
		if job.MetricsPath != "" && job.MetricsPath != "/metrics" {
			t.Errorf("job %s scrapes %s", job.JobName, job.MetricsPath)
		}
		for key := range sc {
			if strings.HasSuffix(key, "_sd_configs") {
				t.Errorf("job %s: %s; the kit's members are static", job.JobName, key)
			}
		}
		for _, g := range job.StaticConfigs {
			targets = append(targets, g.Targets...)
		}
	}
	slices.Sort(targets)
	if want := []string{"neardup-1:8080", "neardup-2:8080", "neardup-3:8080"}; !slices.Equal(targets, want) {
		t.Errorf("prometheus scrapes %v, want %v", targets, want)
	}
	for _, tg := range targets {
		host, port, _ := net.SplitHostPort(tg)
		if env := svc(host).Environment["NEARDUP_HTTP_ADDR"]; env == nil || !strings.HasSuffix(*env, ":"+port) {
			t.Errorf("prometheus scrapes %s but %s listens on %v", tg, host, env)
		}
	}

	// Grafana: the provisioned datasource points at the prometheus
	// service, and the dashboard provider reads the mounted dashboard.
	graf := svc("grafana")
	gm := map[string]string{}
	for _, v := range graf.Volumes {
		gm[v.Target] = v.Source
	}
	prov := gm["/etc/grafana/provisioning"]
	var ds struct {
		APIVersion  int `json:"apiVersion"`
		Datasources []struct {
			Name      string `json:"name"`
			UID       string `json:"uid"`
			Type      string `json:"type"`
			Access    string `json:"access"`
			URL       string `json:"url"`
			IsDefault bool   `json:"isDefault"`
			Editable  bool   `json:"editable"`
		} `json:"datasources"`
	}
	strict(t, "grafana datasources", readFile(t, filepath.Join(prov, "datasources", "prometheus.yaml")), &ds)
	if len(ds.Datasources) != 1 || ds.Datasources[0].Type != "prometheus" || !ds.Datasources[0].IsDefault ||
		ds.Datasources[0].URL != "http://prometheus:9090" {
		t.Errorf("grafana datasources %+v: want the default prometheus at http://prometheus:9090", ds.Datasources)
	}
	var dp struct {
		APIVersion int `json:"apiVersion"`
		Providers  []struct {
			Name            string `json:"name"`
			Type            string `json:"type"`
			DisableDeletion bool   `json:"disableDeletion"`
			AllowUIUpdates  bool   `json:"allowUiUpdates"`
			Options         struct {
				Path string `json:"path"`
			} `json:"options"`
		} `json:"providers"`
	}
	strict(t, "grafana dashboard providers", readFile(t, filepath.Join(prov, "dashboards", "neardup.yaml")), &dp)
	if len(dp.Providers) != 1 || dp.Providers[0].Type != "file" {
		t.Fatalf("grafana dashboard providers %+v", dp.Providers)
	}
	dash, _ := filepath.Abs(dashboardFile)
	found := false
	for target, src := range gm {
		if src == dash && filepath.Dir(target) == dp.Providers[0].Options.Path {
			found = true
		}
	}
	if !found {
		t.Errorf("grafana: %s is not mounted in the provider's path %s (mounts %v)", dashboardFile, dp.Providers[0].Options.Path, gm)
	}
	if home := graf.Environment["GF_DASHBOARDS_DEFAULT_HOME_DASHBOARD_PATH"]; home == nil || gm[*home] != dash {
		t.Errorf("grafana: home dashboard %v is not the kit's", home)
	}
	// Nothing secret is written into the file.
	if pw := graf.Environment["GF_SECURITY_ADMIN_PASSWORD"]; pw == nil || !bytes.Contains(readFile(t, composeFile), []byte("${GRAFANA_ADMIN_PASSWORD")) {
		t.Error("grafana's admin password must come from GRAFANA_ADMIN_PASSWORD")
	}
}
