package lab

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"

	"sigs.k8s.io/yaml"
)

// Paths in the Prometheus pod the Prometheus Operator v0.93.0 writes into the configuration it
// generates (pkg/prometheus/common.go: tlsAssetsDir, where the tls-assets Secrets are mounted,
// and RulesDir, under which each rulefiles ConfigMap is mounted in a folder of its name).
const (
	podCertsDir = "/etc/prometheus/certs/"
	podRulesDir = "/etc/prometheus/rules/"
)

// Discovery is one kubernetes_sd_configs entry of the generated configuration, which the lab
// serves from a file_sd file of its own instead: the targets Kubernetes service discovery of
// Role would find in Namespaces (nil: every namespace) among the lab's processes.
type Discovery struct {
	Job        string
	Role       string
	Namespaces []string
	File       string
}

// Covers says whether the discovery watches namespace.
func (d Discovery) Covers(namespace string) bool {
	return d.Namespaces == nil || slices.Contains(d.Namespaces, namespace)
}

// Rewrite is what the lab changes of the configuration the Prometheus Operator generates, and
// only where the lab cannot be a cluster: its processes are not pods and its Prometheus is not in
// one. The relabelling, the jobs and everything else stay as generated.
type Rewrite struct {
	// Env is the config reloader's environment (POD_NAME, SHARD), whose $(VAR) references it
	// substitutes before Prometheus reads the file.
	Env map[string]string
	// TargetsDir holds the file_sd files that replace kubernetes_sd_configs.
	TargetsDir string
	// CertsDir holds the keys of the tls-assets Secrets (mounted at /etc/prometheus/certs),
	// RulesDir a folder per rulefiles ConfigMap (mounted under /etc/prometheus/rules).
	CertsDir, RulesDir string
	// Files maps other paths of the pod (the ServiceAccount token a monitor's bearerTokenFile
	// names) to the lab's files.
	Files map[string]string
	// Interval replaces every job's scrape_interval (the lab runs in minutes, the monitors ask
	// for 30 s); a scrape_timeout above it is lowered to it, as Prometheus requires.
	Interval time.Duration
}

// envRef is a $(VAR) reference, the form the reloader expands (thanos-io/thanos v0.42.2, which
// prometheus-config-reloader v0.93.0 runs: pkg/reloader/reloader.go envRe).
var envRef = regexp.MustCompile(`\$\(([a-zA-Z_0-9]+)\)`)

// expandEnv is the reloader's expandEnv: every $(VAR) becomes VAR's value, and a variable the
// environment lacks is an error (it tolerates none by default).
func expandEnv(b []byte, env map[string]string) ([]byte, error) {
	var err error
	out := envRef.ReplaceAllFunc(b, func(ref []byte) []byte {
		name := string(ref[2 : len(ref)-1])
		v, ok := env[name]
		if !ok && err == nil {
			err = fmt.Errorf("the configuration refers to $(%s), which the config reloader's environment does not set", name)
		}
		return []byte(v)
	})
	return out, err
}

// Apply returns the configuration the lab's Prometheus runs, and the discoveries whose targets
// the lab writes, from the operator's generated configuration:
//   - $(VAR) expanded as the config reloader does in the pod (the replica's external label, the
//     shard the sharding relabelling keeps);
//   - each kubernetes_sd_configs replaced by file_sd_configs of a file in TargetsDir (pod and
//     endpoints roles; the relabel_configs after them are the generated ones, untouched);
//   - the pod's paths (TLS assets, rule files, the token) mapped to the lab's files;
//   - scrape_interval set to Interval.
func (r Rewrite) Apply(generated []byte) ([]byte, []Discovery, error) {
	expanded, err := expandEnv(generated, r.Env)
	if err != nil {
		return nil, nil, err
	}
	var cfg map[string]any
	if err := yaml.Unmarshal(expanded, &cfg); err != nil {
		return nil, nil, fmt.Errorf("the generated configuration: %w", err)
	}
	if files, ok := cfg["rule_files"].([]any); ok {
		for i, f := range files {
			if files[i], err = r.path(fmt.Sprint(f)); err != nil {
				return nil, nil, err
			}
		}
	}
	scrapes, _ := cfg["scrape_configs"].([]any)
	var discoveries []Discovery
	for i, s := range scrapes {
		sc, ok := s.(map[string]any)
		if !ok {
			return nil, nil, fmt.Errorf("scrape_configs[%d] is a %T", i, s)
		}
		ds, err := r.scrapeConfig(i, sc)
		if err != nil {
			return nil, nil, fmt.Errorf("job %v: %w", sc["job_name"], err)
		}
		discoveries = append(discoveries, ds...)
	}
	out, err := yaml.Marshal(cfg)
	return out, discoveries, err
}

func (r Rewrite) scrapeConfig(i int, sc map[string]any) ([]Discovery, error) {
	job := fmt.Sprint(sc["job_name"])
	var discoveries []Discovery
	if sds, ok := sc["kubernetes_sd_configs"].([]any); ok {
		var files []string
		for j, sd := range sds {
			d, err := discovery(job, sd)
			if err != nil {
				return nil, err
			}
			d.File = filepath.Join(r.TargetsDir, fmt.Sprintf("targets-%d-%d.json", i, j))
			files = append(files, d.File)
			discoveries = append(discoveries, d)
		}
		delete(sc, "kubernetes_sd_configs")
		sc["file_sd_configs"] = []any{map[string]any{"files": files, "refresh_interval": "5s"}}
	}
	if _, ok := sc["scrape_interval"]; ok && r.Interval > 0 {
		sc["scrape_interval"] = r.Interval.String()
	}
	if t, ok := sc["scrape_timeout"].(string); ok && r.Interval > 0 {
		if d, err := time.ParseDuration(t); err != nil || d > r.Interval {
			sc["scrape_timeout"] = r.Interval.String()
		}
	}
	// The keys of a scrape config that name files (Prometheus' HTTPClientConfig: TLS, bearer
	// token, authorization and basic auth credentials).
	paths := []struct {
		parent string
		key    string
	}{{"tls_config", "ca_file"}, {"tls_config", "cert_file"}, {"tls_config", "key_file"}, {"", "bearer_token_file"},
		{"authorization", "credentials_file"}, {"basic_auth", "password_file"}}
	for _, p := range paths {
		m := sc
		if p.parent != "" {
			if m, _ = sc[p.parent].(map[string]any); m == nil {
				continue
			}
		}
		if f, ok := m[p.key].(string); ok {
			mapped, err := r.path(f)
			if err != nil {
				return nil, err
			}
			m[p.key] = mapped
		}
	}
	return discoveries, nil
}

// discovery reads one kubernetes_sd_configs entry as the operator generates it for a monitor
// (pkg/prometheus/promcfg.go generateK8SSDConfig): a role, the namespaces of the monitor's
// namespaceSelector (none: every namespace), and attach_metadata. Anything else (an API server,
// role selectors, node metadata) is an error: the lab's targets would not follow it.
func discovery(job string, sd any) (Discovery, error) {
	m, ok := sd.(map[string]any)
	if !ok {
		return Discovery{}, fmt.Errorf("kubernetes_sd_configs entry is a %T", sd)
	}
	d := Discovery{Job: job}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		switch v := m[k]; k {
		case "role":
			d.Role = fmt.Sprint(v)
			if d.Role != "pod" && d.Role != "endpoints" {
				return d, fmt.Errorf("kubernetes_sd_configs role %q: the lab writes targets of the pod and endpoints roles", d.Role)
			}
		case "namespaces":
			ns, _ := v.(map[string]any)
			names, _ := ns["names"].([]any)
			if len(ns) != 1 || len(names) == 0 {
				return d, fmt.Errorf("kubernetes_sd_configs namespaces %v: the lab knows names only", v)
			}
			for _, n := range names {
				d.Namespaces = append(d.Namespaces, fmt.Sprint(n))
			}
		case "attach_metadata":
			if am, _ := v.(map[string]any); am["node"] == true {
				return d, fmt.Errorf("kubernetes_sd_configs attach_metadata.node: the lab's processes have no node")
			}
		default:
			return d, fmt.Errorf("kubernetes_sd_configs %s: the lab's file_sd targets cannot follow it", k)
		}
	}
	if d.Role == "" {
		return d, fmt.Errorf("kubernetes_sd_configs without a role")
	}
	return d, nil
}

// path maps a path of the Prometheus pod to the lab's file; a path the lab has no file for is an
// error (in a cluster the scrape would fail for want of it).
func (r Rewrite) path(p string) (string, error) {
	if f, ok := r.Files[p]; ok {
		return f, nil
	}
	switch {
	case strings.HasPrefix(p, podCertsDir) && r.CertsDir != "":
		return filepath.Join(r.CertsDir, strings.TrimPrefix(p, podCertsDir)), nil
	case strings.HasPrefix(p, podRulesDir) && r.RulesDir != "":
		return filepath.Join(r.RulesDir, strings.TrimPrefix(p, podRulesDir)), nil
	}
	return "", fmt.Errorf("%s: the lab has no file for this path of the Prometheus pod", p)
}

// writeFiles writes files (a Secret's or ConfigMap's keys) into dir, as a volume mounts them.
func writeFiles(dir string, files map[string][]byte) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	for name, b := range files {
		if strings.ContainsRune(name, '/') {
			return fmt.Errorf("key %q is not a file name", name)
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o600); err != nil {
			return err
		}
	}
	return nil
}
