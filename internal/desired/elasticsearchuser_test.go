package desired

import (
	"encoding/base64"
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// TestElasticsearchRolePrivileges: elasticsearch-hadoop needs cluster monitor (GET / in every
// writing task); Strata's job keeps the two cluster privileges it uses.
func TestElasticsearchRolePrivileges(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   Inputs
		want []string
	}{
		{"user's job", splitTiers(t), []string{"manage_ilm", "manage_index_templates", "monitor"}},
		{"Strata's job", strataJob(t), []string{"manage_ilm", "manage_index_templates"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			roles := map[string]struct {
				Cluster []string `json:"cluster"`
				Indices []struct {
					Names      []string `json:"names"`
					Privileges []string `json:"privileges"`
				} `json:"indices"`
			}{}
			if err := yaml.Unmarshal([]byte(secretValue(t, ElasticsearchRolesSecret(tc.in), ESRolesKey)), &roles); err != nil {
				t.Fatal(err)
			}
			role, ok := roles[ElasticsearchJobUser(tc.in.Pipeline)]
			if !ok || !slices.Equal(role.Cluster, tc.want) {
				t.Errorf("cluster privileges %v, want %v", role.Cluster, tc.want)
			}
			if len(role.Indices) != 1 || slices.Contains(role.Indices[0].Privileges, "read") {
				t.Errorf("index privileges %+v: one entry, no read", role.Indices)
			}
		})
	}
}

// secretValue decodes one key of a built Secret.
func secretValue(t *testing.T, s *unstructured.Unstructured, key string) string {
	t.Helper()
	enc, _, _ := unstructured.NestedString(s.Object, "data", key)
	b, err := base64.StdEncoding.DecodeString(enc)
	if err != nil || enc == "" {
		t.Fatalf("Secret %s key %s: %q %v", s.GetName(), key, enc, err)
	}
	return string(b)
}
