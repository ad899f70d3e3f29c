package controllers_test

import (
	"os"
	"slices"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	"sigs.k8s.io/yaml"

	"github.com/strata-dev/strata/internal/desired"
)

// TestRoleAllowsBlockingOwnerReferences: the children's owner references block their pipeline's
// deletion, which the OwnerReferencesPermissionEnforcement admission plugin allows only to
// whoever may update the pipelines' finalizers (controllers/rbac.go).
func TestRoleAllowsBlockingOwnerReferences(t *testing.T) {
	role := generatedRole(t)
	for _, r := range role.Rules {
		if slices.Contains(r.APIGroups, "strata.dev") && slices.Contains(r.Resources, "analyticspipelines/finalizers") &&
			slices.Contains(r.Verbs, "update") {
			return
		}
	}
	t.Errorf("the generated ClusterRole cannot update analyticspipelines/finalizers: %v", role.Rules)
}

// TestRoleOnlyBindsTheDriverRole: the operator may bind the Spark driver's ClusterRole, by its
// name, and holds none of the rights it grants (controllers/rbac.go) but reading pods.
func TestRoleOnlyBindsTheDriverRole(t *testing.T) {
	role := generatedRole(t)
	bind := false
	for _, r := range role.Rules {
		if slices.Contains(r.Resources, "clusterroles") {
			bind = slices.Equal(r.Verbs, []string{"bind"}) && slices.Equal(r.ResourceNames, []string{desired.SparkDriverClusterRole})
			if !bind {
				t.Errorf("rule on clusterroles %+v, want only bind on %s", r, desired.SparkDriverClusterRole)
			}
		}
		// (persistentvolumeclaims it holds for the ingestion job's checkpoint claim; pods it
		// reads, and only reads, to report those the scheduler cannot place: PodsScheduled.)
		if slices.Contains(r.Resources, "services") {
			t.Errorf("the operator holds %v on services: only the driver's role should", r.Verbs)
		}
		if slices.Contains(r.Resources, "pods") {
			for _, v := range r.Verbs {
				if !slices.Contains([]string{"get", "list", "watch"}, v) {
					t.Errorf("the operator holds %v on pods: it only reads them, and only the driver's role should write them", r.Verbs)
				}
			}
		}
	}
	if !bind {
		t.Errorf("the generated ClusterRole cannot bind %s", desired.SparkDriverClusterRole)
	}
}

// generatedRole is the operator's ClusterRole as make manifests generates it from the markers.
func generatedRole(t *testing.T) rbacv1.ClusterRole {
	t.Helper()
	b, err := os.ReadFile("../config/rbac/role.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var role rbacv1.ClusterRole
	if err := yaml.Unmarshal(b, &role); err != nil {
		t.Fatal(err)
	}
	return role
}
