package lab

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/strata-dev/strata/internal/controlplane"
	"github.com/strata-dev/strata/internal/desired"
	"github.com/strata-dev/strata/internal/testutil"
	"github.com/strata-dev/strata/internal/testutil/gen"
)

// TestExporterExampleFollowsThePipeline checks the documented exporter Deployment against the
// names Strata gives the sample pipeline's Elasticsearch (ECK's Service and CA Secret), the
// pinned exporter version and the PodMonitor that scrapes it.
func TestExporterExampleFollowsThePipeline(t *testing.T) {
	for _, p := range []struct{ namespace, name string }{{"default", "sensors"}, {PipelineNamespace, "lab"}} {
		pipeline := gen.Pipeline(gen.SetName(p.namespace, p.name))
		d, err := ExampleExporter(pipeline)
		if err != nil {
			t.Fatal(err)
		}
		c, port, err := exporterContainer(d)
		if err != nil {
			t.Fatal(err)
		}
		if d.Namespace != p.namespace {
			t.Errorf("%s: namespace %q, want the pipeline's %q", p.name, d.Namespace, p.namespace)
		}
		for _, want := range []string{"--es.uri=" + desired.ElasticsearchServiceURL(pipeline), "--es.all"} {
			if !slices.Contains(c.Args, want) {
				t.Errorf("%s: args %q lack %s", p.name, c.Args, want)
			}
		}
		var caSecret string
		for _, v := range d.Spec.Template.Spec.Volumes {
			if v.Secret != nil {
				caSecret = v.Secret.SecretName
			}
		}
		if caSecret != desired.ElasticsearchCASecret(pipeline) {
			t.Errorf("%s: CA from Secret %q, want ECK's %q", p.name, caSecret, desired.ElasticsearchCASecret(pipeline))
		}
		versions, err := controlplane.Versions()
		if err != nil {
			t.Fatal(err)
		}
		if v := versions["ELASTICSEARCH_EXPORTER_VERSION"]; !strings.HasSuffix(c.Image, ":"+v) {
			t.Errorf("image %s, want the version hack/versions.env pins (%s)", c.Image, v)
		}

		upstream, err := os.ReadFile(filepath.Join(testutil.Root(), "config", "prometheus", "upstream-monitors.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		monitors, err := ParseMonitors(upstream, MonitorNamespace)
		if err != nil {
			t.Fatal(err)
		}
		i := slices.IndexFunc(monitors, func(m Monitor) bool { return m.Metadata.Name == "strata-elasticsearch-exporter" })
		if i < 0 {
			t.Fatal("upstream-monitors.yaml has no strata-elasticsearch-exporter PodMonitor")
		}
		m := monitors[i]
		for k, v := range m.Spec.Selector.MatchLabels {
			if d.Spec.Template.Labels[k] != v {
				t.Errorf("the PodMonitor selects %s=%s, the exporter's pods have %v", k, v, d.Spec.Template.Labels)
			}
		}
		if ep := m.Spec.PodMetricsEndpoints; len(ep) != 1 || ep[0].Port != port.Name || !m.Selects(d.Namespace) {
			t.Errorf("the PodMonitor scrapes %+v in %+v, want port %s in %s", ep, m.Spec.NamespaceSelector, port.Name, d.Namespace)
		}
	}
}

// TestExporterArgsForTheLab checks what the lab changes of the Deployment's arguments.
func TestExporterArgsForTheLab(t *testing.T) {
	d, err := ExampleExporter(gen.Pipeline(gen.SetName(PipelineNamespace, "lab")))
	if err != nil {
		t.Fatal(err)
	}
	c, _, err := exporterContainer(d)
	if err != nil {
		t.Fatal(err)
	}
	got := exporterArgs(c, "http://127.0.0.1:9200", "127.0.0.1:1")
	want := []string{"--web.listen-address=127.0.0.1:1", "--es.uri=http://127.0.0.1:9200", "--es.all", "--es.timeout=10s"}
	if !slices.Equal(got, want) {
		t.Errorf("args\n got %q\nwant %q", got, want)
	}
}
