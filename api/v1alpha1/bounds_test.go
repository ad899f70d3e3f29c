package v1alpha1_test

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/distribution/reference"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/yaml"

	"github.com/strata-dev/strata/api/v1alpha1"
)

// The kubebuilder markers cannot name Go constants, so they repeat the bounds of bounds.go;
// these tests hold the generated CRDs to them.

func crdSchema(t *testing.T, file string) apiextensionsv1.JSONSchemaProps {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "config", "crd", "bases", file))
	if err != nil {
		t.Fatal(err)
	}
	var crd apiextensionsv1.CustomResourceDefinition
	if err := yaml.Unmarshal(data, &crd); err != nil {
		t.Fatal(err)
	}
	return *crd.Spec.Versions[0].Schema.OpenAPIV3Schema
}

func prop(s apiextensionsv1.JSONSchemaProps, path string) apiextensionsv1.JSONSchemaProps {
	for _, f := range strings.Split(path, ".") {
		s = s.Properties[f]
	}
	return s
}

func TestKafkaVersionsAreTheEnum(t *testing.T) {
	s := prop(crdSchema(t, "strata.dev_analyticspipelines.yaml"), "spec.kafka.version")
	var enum []string
	for _, e := range s.Enum {
		enum = append(enum, strings.Trim(string(e.Raw), `"`))
	}
	if !slices.Equal(enum, v1alpha1.KafkaVersions) {
		t.Errorf("spec.kafka.version enum %v, KafkaVersions %v", enum, v1alpha1.KafkaVersions)
	}
	if string(s.Default.Raw) != `"`+v1alpha1.DefaultKafkaVersion+`"` || !slices.Contains(v1alpha1.KafkaVersions, v1alpha1.DefaultKafkaVersion) {
		t.Errorf("default %s is not DefaultKafkaVersion %s, or not in KafkaVersions", s.Default.Raw, v1alpha1.DefaultKafkaVersion)
	}
}

func TestPatternsAreTheLibraries(t *testing.T) {
	pipeline := crdSchema(t, "strata.dev_analyticspipelines.yaml")
	if got := prop(pipeline, "spec.spark.image").Pattern; got != v1alpha1.ImagePattern || got != reference.ReferenceRegexp.String() {
		t.Errorf("spec.spark.image pattern is not distribution/reference's ReferenceRegexp:\n%s\n%s", got, reference.ReferenceRegexp.String())
	}
	if got := prop(pipeline, "spec.kafka.rackTopologyKey").Pattern; got != v1alpha1.RackKeyPattern {
		t.Errorf("spec.kafka.rackTopologyKey pattern %s, want RackKeyPattern (empty, or LabelKeyPattern)", got)
	}
}

// TestEveryQuantityBounded walks both CRDs: every int-or-string field under spec must have a
// rule, and every rule that parses a quantity must first refuse a negative exponent (parsing
// one divides by 10^exponent) and look at the approximate value (asApproximateFloat never
// expands the digits) before any exact comparison (which does).
func TestEveryQuantityBounded(t *testing.T) {
	fields, rules := 0, 0
	for _, file := range []string{"strata.dev_analyticspipelines.yaml", "strata.dev_storagetiers.yaml"} {
		var walk func(path, name string, s, parent apiextensionsv1.JSONSchemaProps)
		walk = func(path, name string, s, parent apiextensionsv1.JSONSchemaProps) {
			if s.XIntOrString {
				fields++
				byParent := slices.ContainsFunc(parent.XValidations, func(r apiextensionsv1.ValidationRule) bool {
					return strings.Contains(r.Rule, "quantity(string(self."+name+"))")
				})
				if len(s.XValidations) == 0 && !byParent {
					t.Errorf("%s %s: a quantity without a rule bounding it", file, path)
				}
			}
			for _, r := range s.XValidations {
				parse := strings.Index(r.Rule, "quantity(string(")
				if parse < 0 {
					continue
				}
				rules++
				if g := strings.Index(r.Rule, "contains('e-')"); g < 0 || g > parse {
					t.Errorf("%s %s: rule parses a quantity before refusing a negative exponent: %s", file, path, r.Rule)
				}
				guard := strings.Index(r.Rule, "asApproximateFloat")
				for _, expanding := range []string{"isLessThan", "isGreaterThan", "asInteger", "compareTo"} {
					if i := strings.Index(r.Rule, expanding); i >= 0 && (guard < 0 || guard > i) {
						t.Errorf("%s %s: rule calls %s before bounding the quantity with asApproximateFloat: %s", file, path, expanding, r.Rule)
					}
				}
			}
			for child, p := range s.Properties {
				walk(path+"."+child, child, p, s)
			}
			if s.Items != nil && s.Items.Schema != nil {
				walk(path+"[]", "", *s.Items.Schema, s)
			}
		}
		walk("", "spec", prop(crdSchema(t, file), "spec"), apiextensionsv1.JSONSchemaProps{})
	}
	if fields < 10 || rules < 12 {
		t.Errorf("found %d quantity fields and %d rules parsing quantities, want the 10 fields and 12 rules of the two specs", fields, rules)
	}
}

// The name rules of the CRD are NamePattern and MaxNameLength, and NamePattern is what
// apimachinery's IsDNS1035Label accepts (the check the Spark operator's webhook and Service
// names make).
func TestNameRulesAreTheBounds(t *testing.T) {
	var rules []string
	for _, r := range crdSchema(t, "strata.dev_analyticspipelines.yaml").XValidations {
		rules = append(rules, r.Rule)
	}
	all := strings.Join(rules, "\n")
	for _, want := range []string{fmt.Sprintf("size(self.metadata.name) <= %d", v1alpha1.MaxNameLength),
		fmt.Sprintf("self.metadata.name.matches('%s')", v1alpha1.NamePattern)} {
		if !strings.Contains(all, want) {
			t.Errorf("no rule %s among the pipeline's rules:\n%s", want, all)
		}
	}
	re := regexp.MustCompile(v1alpha1.NamePattern)
	for _, name := range []string{"sensors", "a", "s-1", "sen.sors", "1sensors", "sensors-", "Sensors", "-s", "s_1", ""} {
		if got, want := re.MatchString(name), len(validation.IsDNS1035Label(name)) == 0; got != want {
			t.Errorf("NamePattern matches %q: %t, IsDNS1035Label: %t", name, got, want)
		}
	}
}
