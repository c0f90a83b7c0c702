package deploy

import (
	"maps"
	"slices"
	"strings"
	"testing"
	"time"
)

// envName is the environment variable of a configuration key
// (kafka.sasl.password → NEARDUP_KAFKA_SASL_PASSWORD).
func envName(key string) string {
	return "NEARDUP_" + strings.ToUpper(strings.ReplaceAll(key, ".", "_"))
}

// secretKeys are the configuration keys whose values are secrets: they
// may only come from a Kubernetes Secret (or, on a laptop, the compose
// environment), never from a ConfigMap or an image.
var secretKeys = []string{"index.url", "kafka.sasl.user", "kafka.sasl.password"}

// checkNeardupEnv runs "neardup config check" with env and fails the test
// unless the configuration is valid and every NEARDUP_ variable in env
// names a configuration key whose effective value is the one given. An
// unknown variable would otherwise be ignored by neardup without a word.
// It returns the effective configuration, key → value.
func checkNeardupEnv(t *testing.T, what string, env map[string]string) map[string]string {
	t.Helper()
	var list []string
	for _, k := range slices.Sorted(maps.Keys(env)) {
		list = append(list, k+"="+env[k])
	}
	out := neardupCmd(t, list, "config", "check")
	if !strings.HasPrefix(out, "configuration is valid") {
		t.Fatalf("%s: neardup config check: %s", what, out)
	}
	effective := map[string]string{}
	byEnv := map[string]string{}
	for _, line := range strings.Split(out, "\n")[1:] {
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			continue
		}
		effective[k] = v
		byEnv[envName(k)] = k
	}
	if len(effective) < 40 {
		t.Fatalf("%s: config check listed %d keys:\n%s", what, len(effective), out)
	}
	for name, want := range env {
		if !strings.HasPrefix(name, "NEARDUP_") {
			continue
		}
		key, ok := byEnv[name]
		if !ok {
			t.Errorf("%s: %s is no neardup configuration key (neardup config example lists them)", what, name)
			continue
		}
		if got := effective[key]; !sameValue(got, want) && !slices.Contains(secretKeys, key) {
			t.Errorf("%s: %s=%q but neardup took %s=%q", what, name, want, key, got)
		}
	}
	return effective
}

// sameValue compares a value as given with the value config check prints
// (durations are printed normalized: 720h → 720h0m0s).
func sameValue(got, want string) bool {
	if got == want {
		return true
	}
	dg, err1 := time.ParseDuration(got)
	dw, err2 := time.ParseDuration(want)
	return err1 == nil && err2 == nil && dg == dw
}

// shutdownTimeout is kafka.shutdown_timeout of an effective configuration.
func shutdownTimeout(t *testing.T, effective map[string]string) time.Duration {
	t.Helper()
	d, err := time.ParseDuration(effective["kafka.shutdown_timeout"])
	if err != nil {
		t.Fatalf("kafka.shutdown_timeout: %v", err)
	}
	return d
}
