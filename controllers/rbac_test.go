package controllers_test

import (
	"os"
	"slices"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	"sigs.k8s.io/yaml"
)

// TestRoleAllowsBlockingOwnerReferences: the children's owner references block their pipeline's
// deletion, which the OwnerReferencesPermissionEnforcement admission plugin allows only to
// whoever may update the pipelines' finalizers (controllers/rbac.go).
func TestRoleAllowsBlockingOwnerReferences(t *testing.T) {
	b, err := os.ReadFile("../config/rbac/role.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var role rbacv1.ClusterRole
	if err := yaml.Unmarshal(b, &role); err != nil {
		t.Fatal(err)
	}
	for _, r := range role.Rules {
		if slices.Contains(r.APIGroups, "strata.dev") && slices.Contains(r.Resources, "analyticspipelines/finalizers") &&
			slices.Contains(r.Verbs, "update") {
			return
		}
	}
	t.Errorf("the generated ClusterRole cannot update analyticspipelines/finalizers: %v", role.Rules)
}
