package cli_test

import (
	"os"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/strata-dev/strata/internal/cli"
	"github.com/strata-dev/strata/internal/testutil"
)

// What the commands read besides Strata's own objects: v1 Lists (kubectl get -o yaml), and
// other kinds kept in the same files, which are skipped with a note.

// kubectlList wraps the objects of files in a v1 List as `kubectl get -o yaml` writes it: with
// what the API server adds (uid, resourceVersion, managedFields, status ...), which the CLI must
// take as the API server takes it on a create.
func kubectlList(t *testing.T, files ...string) string {
	t.Helper()
	var items []any
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range yamlDocuments(t, string(b)) {
			meta := o["metadata"].(map[string]any)
			meta["uid"] = "0b6f1c52-5b1e-4b8e-9d0a-3f1f0e8a7c11"
			meta["resourceVersion"] = "4711"
			meta["generation"] = 1
			meta["creationTimestamp"] = "2025-01-01T00:00:00Z"
			meta["annotations"] = map[string]any{"kubectl.kubernetes.io/last-applied-configuration": "{}\n"}
			meta["managedFields"] = []any{map[string]any{"apiVersion": "strata.dev/v1alpha1", "fieldsType": "FieldsV1",
				"fieldsV1": map[string]any{"f:spec": map[string]any{".": map[string]any{}}}, "manager": "kubectl-client-side-apply",
				"operation": "Update", "time": "2025-01-01T00:00:00Z"}}
			o["status"] = map[string]any{"observedGeneration": 1, "conditions": []any{map[string]any{
				"type": "Ready", "status": "True", "reason": "Ready", "message": "ok", "observedGeneration": 1,
				"lastTransitionTime": "2025-01-01T00:00:00Z"}}}
			items = append(items, o)
		}
	}
	out, err := yaml.Marshal(map[string]any{"apiVersion": "v1", "kind": "List", "items": items,
		"metadata": map[string]any{"resourceVersion": ""}})
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

// A v1 List holding the samples reads as the sample files do, in every command.
func TestListInput(t *testing.T) {
	list := kubectlList(t, samples...)
	path := writeTemp(t, list)
	cases := []struct {
		name  string
		extra []string
	}{
		{"plan", []string{"plan"}},
		{"plan -o json", []string{"plan", "-o", "json"}},
		{"render", []string{"render"}},
		{"queries", []string{"queries"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			want := run(t, "", withFiles(c.extra[0], samples, c.extra[1:]...)...)
			for _, got := range []result{run(t, "", withFiles(c.extra[0], []string{path}, c.extra[1:]...)...),
				run(t, list, withFiles(c.extra[0], []string{"-"}, c.extra[1:]...)...)} {
				if got.code != cli.ExitOK || got.stderr != "" {
					t.Fatalf("exit %d, stderr:\n%s", got.code, got.stderr)
				}
				if got.stdout == "" || got.stdout != want.stdout {
					t.Errorf("the List gives other output than the files:\n%s", testutil.LineDiff(want.stdout, got.stdout))
				}
			}
		})
	}
}

func readSample(t *testing.T, i int) string {
	t.Helper()
	b, err := os.ReadFile(samples[i])
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// Objects that are not Strata's are skipped with one note each, and the output is the one
// without them; what claims to be Strata's but is not a kind this version knows is refused,
// naming it and where it is.
func TestForeignObjects(t *testing.T) {
	pipeline, nvme, hdd := readSample(t, 0), readSample(t, 1), readSample(t, 2)
	tiers := []string{samples[1], samples[2]}
	// item indents an object as an item of a List written by hand.
	item := func(obj string) string {
		return "- " + strings.ReplaceAll(strings.TrimSpace(obj), "\n", "\n  ") + "\n"
	}
	list := func(items ...string) string { return "apiVersion: v1\nkind: List\nitems:\n" + strings.Join(items, "") }
	const namespace = "apiVersion: v1\nkind: Namespace\nmetadata: {name: analytics}\n"
	cases := []struct {
		name    string
		cmd     string
		content string // the file passed with the samples' tiers
		code    int
		// wants are in stderr; a note is a line, so notes is how many lines stderr has (exit 0).
		wants []string
		notes int
	}{
		{name: "a Namespace before the pipeline", cmd: "plan", content: namespace + "---\n" + pipeline, code: cli.ExitOK,
			wants: []string{"strata plan: note: FILE (document 1): skipped Namespace/analytics (apiVersion v1): not a Strata object\n"}, notes: 1},
		{name: "a Namespace and a ConfigMap holding a NaN in a List", cmd: "render",
			content: list(item(namespace), item("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\ndata: {ratio: .nan, mode: 0644}"), item(pipeline)),
			code:    cli.ExitOK,
			wants: []string{"strata render: note: FILE (document 1, item 1): skipped Namespace/analytics (apiVersion v1): not a Strata object\n",
				"strata render: note: FILE (document 1, item 2): skipped ConfigMap/settings (apiVersion v1): not a Strata object\n"}, notes: 2},
		{name: "a strata.dev object of an unknown kind", cmd: "render", content: pipeline + "---\napiVersion: strata.dev/v1alpha1\nkind: StorageTiers\nmetadata: {name: x}\n",
			code: cli.ExitError, wants: []string{`FILE (document 2): apiVersion "strata.dev/v1alpha1" kind "StorageTiers" is not a Strata object`}},
		{name: "a strata.dev object of an unknown version in a List", cmd: "plan", content: list(item(pipeline), item(strings.Replace(nvme, "v1alpha1", "v1beta1", 1))),
			code: cli.ExitError, wants: []string{`FILE (document 1, item 2): apiVersion "strata.dev/v1beta1" kind "StorageTier" is not a Strata object`}},
		{name: "a Strata kind in another group", cmd: "plan", content: strings.Replace(pipeline, "strata.dev/v1alpha1", "strata.io/v1alpha1", 1),
			code: cli.ExitError, wants: []string{`apiVersion "strata.io/v1alpha1" kind "AnalyticsPipeline" is not a Strata object`}},
		{name: "an object without apiVersion", cmd: "plan", content: pipeline + "---\nkind: ConfigMap\nmetadata: {name: x}\n",
			code: cli.ExitError, wants: []string{`FILE (document 2): apiVersion "" kind "ConfigMap" is not a Strata object`}},
		{name: "an invalid pipeline in a List names the item", cmd: "plan", content: list(item(hdd), item(strings.Replace(pipeline, "efficiencyPercent: 90", "efficiencyPercent: 190", 1))),
			code: cli.ExitError, wants: []string{`FILE (document 1, item 2): AnalyticsPipeline.strata.dev "sensors" is invalid: spec.network.efficiencyPercent`}},
		{name: "a leading zero in a List item names the field", cmd: "plan", content: list(item(strings.Replace(pipeline, "messagesPerSecond: 10000", "messagesPerSecond: 010000", 1))),
			code: cli.ExitError, wants: []string{"FILE (document 1, item 1): spec.workload.messagesPerSecond: 010000 has a leading zero"}},
		{name: "an alias to another item", cmd: "plan", content: list(item(hdd), item(strings.Replace(pipeline, "apiVersion: strata.dev/v1alpha1", "apiVersion: &v strata.dev/v1alpha1", 1)),
			item(strings.Replace(nvme, "apiVersion: strata.dev/v1alpha1", "apiVersion: *v", 1))),
			code: cli.ExitError, wants: []string{"FILE (document 1, item 3): the alias *v refers to an anchor outside the item"}},
		{name: "a List inside a List", cmd: "plan", content: list(item(list(item(pipeline)))),
			code: cli.ExitError, wants: []string{"FILE (document 1, item 1): a List inside a List"}},
		{name: "items not a list", cmd: "plan", content: "apiVersion: v1\nkind: List\nitems: {a: 1}\n",
			code: cli.ExitError, wants: []string{"FILE: items of a v1 List must be a list, found something else"}},
		{name: "an item not a mapping", cmd: "plan", content: list("- 42\n"),
			code: cli.ExitError, wants: []string{`expected a mapping (an AnalyticsPipeline or StorageTier object) at item 1 of document 1 of FILE, found the scalar "42"`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := writeTemp(t, c.content)
			r := run(t, "", withFiles(c.cmd, append([]string{path}, tiers...))...)
			if r.code != c.code {
				t.Fatalf("exit %d, want %d; stderr:\n%s", r.code, c.code, r.stderr)
			}
			for _, w := range c.wants {
				if w = strings.ReplaceAll(w, "FILE", path); !strings.Contains(r.stderr, w) {
					t.Errorf("stderr\n%s\nlacks\n%s", r.stderr, w)
				}
			}
			if c.code != cli.ExitOK {
				if r.stdout != "" {
					t.Errorf("errors must leave stdout empty, got:\n%.300s", r.stdout)
				}
				return
			}
			if n := strings.Count(r.stderr, "\n"); n != c.notes {
				t.Errorf("%d lines on stderr, want %d notes:\n%s", n, c.notes, r.stderr)
			}
			want := run(t, "", withFiles(c.cmd, samples)...)
			if r.stdout != want.stdout {
				t.Errorf("the output differs from the samples' alone:\n%s", testutil.LineDiff(want.stdout, r.stdout))
			}
		})
	}
}
