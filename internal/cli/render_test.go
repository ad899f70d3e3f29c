package cli_test

import (
	"bufio"
	"encoding/json"
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"

	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	"github.com/strata-dev/strata/internal/cli"
)

// The samples `strata render` is documented with.
var samples = []string{
	"../../config/samples/analyticspipeline-sensors.yaml",
	"../../config/samples/storagetier-nvme-local.yaml",
	"../../config/samples/storagetier-hdd-st1.yaml",
}

func withFiles(cmd string, names []string, extra ...string) []string {
	args := []string{cmd}
	for _, n := range names {
		args = append(args, "-f", n)
	}
	return append(args, extra...)
}

// yamlDocuments splits a YAML stream into its documents, decoded (empty ones dropped).
func yamlDocuments(t *testing.T, stream string) []map[string]any {
	t.Helper()
	r := utilyaml.NewYAMLReader(bufio.NewReader(strings.NewReader(stream)))
	var out []map[string]any
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := yaml.Unmarshal(doc, &m); err != nil {
			t.Fatalf("%v in\n%s", err, doc)
		}
		if len(m) > 0 {
			out = append(out, m)
		}
	}
}

func TestRender(t *testing.T) {
	cases := []struct {
		name   string
		args   func(t *testing.T) []string
		golden string
		stderr string // all of it
		// check looks at the decoded objects.
		check func(t *testing.T, objs []map[string]any)
	}{
		{name: "samples", args: func(*testing.T) []string { return withFiles("render", samples) }, golden: "samples.render.golden",
			check: func(t *testing.T, objs []map[string]any) {
				// desired.All's order: the ConfigMap first, the SparkApplication last.
				if first, last := objs[0]["kind"], objs[len(objs)-1]["kind"]; first != "ConfigMap" || last != "SparkApplication" {
					t.Errorf("first %v, last %v: want desired.All's order", first, last)
				}
				for _, o := range objs {
					meta := o["metadata"].(map[string]any)
					if _, ok := meta["ownerReferences"]; ok {
						t.Errorf("%v %v has ownerReferences: their UID is unknown offline", o["kind"], meta["name"])
					}
					if meta["namespace"] != "default" {
						t.Errorf("%v %v in namespace %v, want the pipeline's (default)", o["kind"], meta["name"], meta["namespace"])
					}
				}
			}},
		{name: "-n and --ingest-image", args: func(*testing.T) []string {
			return withFiles("render", samples, "-n", "staging", "--ingest-image", "registry.example/ingest:1")
		},
			check: func(t *testing.T, objs []map[string]any) {
				b, _ := json.Marshal(objs)
				for _, want := range []string{`"namespace":"staging"`, "sensors-kafka-bootstrap.staging.svc:9092", `"image":"registry.example/ingest:1"`} {
					if !strings.Contains(string(b), want) {
						t.Errorf("the objects lack %s", want)
					}
				}
				if strings.Contains(string(b), `"namespace":"default"`) || strings.Contains(string(b), "strata-ingest:") {
					t.Error("the objects still name the sample's namespace or the default job image")
				}
			}},
		// The controller plans such a pipeline only if its installer allowed it: render says so.
		{name: "the user's own ServiceAccount", args: func(t *testing.T) []string {
			return []string{"render", "-f", sensorsWith(t, `sparkVersion: "4.0.2"`, "serviceAccountName: ingest-driver\n    sparkVersion: \"4.0.2\""), "-f", "testdata/tiers.yaml"}
		},
			stderr: `spec.spark.serviceAccountName ("ingest-driver"): the operator applies these objects only if installed with spark.allowUserServiceAccounts=true`,
			check: func(t *testing.T, objs []map[string]any) {
				b, _ := json.Marshal(objs[len(objs)-1])
				if !strings.Contains(string(b), `"serviceAccount":"ingest-driver"`) {
					t.Errorf("the SparkApplication does not run as the spec's ServiceAccount: %.300s", b)
				}
				for _, o := range objs {
					if o["kind"] == "ServiceAccount" {
						t.Error("a ServiceAccount is made although the spec names the user's own")
					}
				}
			}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := run(t, "", c.args(t)...)
			if c.stderr != "" {
				if !strings.Contains(r.stderr, c.stderr) || strings.Count(r.stderr, "\n") != 1 {
					t.Errorf("stderr\n%s\nis not one line with\n%s", r.stderr, c.stderr)
				}
				r.stderr = ""
			}
			if r.code != cli.ExitOK || r.stderr != "" {
				t.Fatalf("exit %d, stderr:\n%s", r.code, r.stderr)
			}
			if !strings.HasPrefix(r.stdout, "---\n") {
				t.Errorf("the stream does not start with ---:\n%.200s", r.stdout)
			}
			objs := yamlDocuments(t, r.stdout)
			if n := strings.Count(r.stdout, "\n---\n") + 1; n != len(objs) || len(objs) < 10 {
				t.Errorf("%d documents, %d objects: want one --- per object and the pipeline's ~14 children", n, len(objs))
			}
			if c.golden != "" {
				golden(t, c.golden, r.stdout)
			}
			c.check(t, objs)
		})
	}
}

// -o json is one v1 List holding exactly the objects -o yaml prints, in the same order.
func TestRenderJSONIsTheYAMLAsAList(t *testing.T) {
	y := run(t, "", withFiles("render", samples)...)
	j := run(t, "", withFiles("render", samples, "-o", "json")...)
	if y.code != cli.ExitOK || j.code != cli.ExitOK {
		t.Fatalf("exit %d and %d: %s%s", y.code, j.code, y.stderr, j.stderr)
	}
	dec := json.NewDecoder(strings.NewReader(j.stdout))
	dec.DisallowUnknownFields()
	var list struct {
		APIVersion string           `json:"apiVersion"`
		Kind       string           `json:"kind"`
		Items      []map[string]any `json:"items"`
	}
	if err := dec.Decode(&list); err != nil {
		t.Fatal(err)
	}
	if dec.More() {
		t.Error("more than one JSON value on stdout")
	}
	if list.APIVersion != "v1" || list.Kind != "List" {
		t.Errorf("apiVersion %q kind %q, want v1 List", list.APIVersion, list.Kind)
	}
	docs := yamlDocuments(t, y.stdout)
	if len(list.Items) != len(docs) {
		t.Fatalf("%d items, %d YAML documents", len(list.Items), len(docs))
	}
	for i := range docs {
		if !reflect.DeepEqual(list.Items[i], docs[i]) {
			t.Errorf("item %d (%v) differs from YAML document %d", i, list.Items[i]["kind"], i)
		}
	}
}
