package schema

import (
	"context"
	"fmt"
	"io/fs"
	"regexp"
	"sort"
	"strings"

	apiextensionsinternal "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel"
	structuraldefaulting "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	structurallisttype "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/listtype"
	schemaobjectmeta "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/objectmeta"
	structuralpruning "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/pruning"
	apiservervalidation "k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"k8s.io/apimachinery/pkg/util/validation/field"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	"sigs.k8s.io/yaml"

	"github.com/strata-dev/strata/config/crd"
)

// DefaultNamespace is what a namespaced object without a namespace gets, as with kubectl and
// an empty context.
const DefaultNamespace = "default"

// Admission holds the compiled schemas of every served version of the Strata CRDs.
type Admission struct {
	kinds map[schema.GroupVersionKind]*kindSchema
}

type kindSchema struct {
	gvk        schema.GroupVersionKind
	namespaced bool
	structural *structuralschema.Structural
	validator  apiservervalidation.SchemaValidator
	cel        *cel.Validator
}

// New compiles the embedded CRDs. It fails only if the generated CRDs are broken, which the API
// server would refuse too.
func New() (*Admission, error) {
	return FromFS(crd.Bases, "bases")
}

// FromFS compiles the CRDs in dir of fsys (one per YAML file).
func FromFS(fsys fs.FS, dir string) (*Admission, error) {
	files, err := fs.Glob(fsys, dir+"/*.yaml")
	if err != nil {
		return nil, err
	}
	a := &Admission{kinds: map[schema.GroupVersionKind]*kindSchema{}}
	for _, name := range files {
		data, err := fs.ReadFile(fsys, name)
		if err != nil {
			return nil, err
		}
		var def apiextensionsv1.CustomResourceDefinition
		if err := yaml.UnmarshalStrict(data, &def); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		if err := a.add(&def); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
	}
	if len(a.kinds) == 0 {
		return nil, fmt.Errorf("no CustomResourceDefinitions in %s", dir)
	}
	return a, nil
}

func (a *Admission) add(def *apiextensionsv1.CustomResourceDefinition) error {
	for _, v := range def.Spec.Versions {
		if !v.Served || v.Schema == nil {
			continue
		}
		// The same steps as the API server's CRD handler: convert to the internal version,
		// build the structural schema, prune defaults, compile validators.
		internal := &apiextensionsinternal.CustomResourceValidation{}
		if err := apiextensionsv1.Convert_v1_CustomResourceValidation_To_apiextensions_CustomResourceValidation(v.Schema, internal, nil); err != nil {
			return err
		}
		s, err := structuralschema.NewStructural(internal.OpenAPIV3Schema)
		if err != nil {
			return fmt.Errorf("version %s: not a structural schema: %w", v.Name, err)
		}
		s = s.DeepCopy()
		if err := structuraldefaulting.PruneDefaults(s); err != nil {
			return err
		}
		validator, _, err := apiservervalidation.NewSchemaValidator(internal.OpenAPIV3Schema)
		if err != nil {
			return err
		}
		gvk := schema.GroupVersionKind{Group: def.Spec.Group, Version: v.Name, Kind: def.Spec.Names.Kind}
		a.kinds[gvk] = &kindSchema{
			gvk:        gvk,
			namespaced: def.Spec.Scope == apiextensionsv1.NamespaceScoped,
			structural: s,
			validator:  validator,
			cel:        cel.NewValidator(s, true, celconfig.PerCallLimit),
		}
	}
	return nil
}

// DecodeYAML turns one YAML document into the form the API server validates: whole numbers
// become int64 and others float64 (as the API server's JSON decoding does; the CEL rules
// depend on it), and a key given twice is an error, as under strict field validation. An empty
// document decodes to nil.
func DecodeYAML(doc []byte) (map[string]any, error) {
	j, err := yaml.YAMLToJSONStrict(doc)
	if err != nil {
		return nil, err
	}
	var obj map[string]any
	if err := utiljson.Unmarshal(j, &obj); err != nil {
		return nil, err
	}
	return obj, nil
}

// Knows reports whether the object's apiVersion and kind are a Strata kind.
func (a *Admission) Knows(gvk schema.GroupVersionKind) bool {
	_, ok := a.kinds[gvk]
	return ok
}

// UnknownFieldsError is the API server's strict field validation failing: the object has
// fields the schema does not know (usually a typo).
type UnknownFieldsError struct {
	Kind, Name string
	// Paths are the unknown fields, e.g. "spec.kafka.brokerz".
	Paths []string
}

func (e *UnknownFieldsError) Error() string {
	quoted := make([]string, len(e.Paths))
	for i, p := range e.Paths {
		quoted[i] = fmt.Sprintf("unknown field %q", p)
	}
	return fmt.Sprintf("%s %q: strict decoding error: %s", e.Kind, e.Name, strings.Join(quoted, ", "))
}

// InvalidError is the API server's validation failing; Errors name the fields.
type InvalidError struct {
	GroupKind schema.GroupKind
	Name      string
	Errors    field.ErrorList
}

// Error is the message the API server returns (and kubectl prints).
func (e *InvalidError) Error() string {
	return apierrors.NewInvalid(e.GroupKind, e.Name, e.Errors).Error()
}

// Admit does to obj what the API server does to an object being created: it rejects unknown
// fields, drops status (the status subresource ignores it on create), applies the schema's
// defaults, and validates. obj is modified in place: on success it is the object the API
// server would store.
func (a *Admission) Admit(ctx context.Context, obj map[string]any) error {
	u := &unstructured.Unstructured{Object: obj}
	gvk := u.GroupVersionKind()
	k, ok := a.kinds[gvk]
	if !ok {
		return fmt.Errorf("no Strata kind %s", gvk.String())
	}

	// Strict field validation, as kubectl requests by default.
	_, _, metaUnknown, err := schemaobjectmeta.GetObjectMetaWithOptions(obj, schemaobjectmeta.ObjectMetaOptions{ReturnUnknownFieldPaths: true})
	if err != nil {
		return &InvalidError{GroupKind: gvk.GroupKind(), Name: u.GetName(),
			Errors: field.ErrorList{field.Invalid(field.NewPath("metadata"), nil, err.Error())}}
	}
	unknown := append(metaUnknown, structuralpruning.PruneWithOptions(obj, k.structural, true,
		structuralschema.UnknownFieldPathOptions{TrackUnknownFieldPaths: true})...)
	if len(unknown) > 0 {
		sort.Strings(unknown)
		return &UnknownFieldsError{Kind: gvk.Kind, Name: u.GetName(), Paths: unknown}
	}

	delete(obj, "status")
	if k.namespaced && u.GetNamespace() == "" {
		u.SetNamespace(DefaultNamespace)
	}
	if !k.namespaced {
		u.SetNamespace("")
	}
	structuraldefaulting.PruneNonNullableNullsWithoutDefaults(obj, k.structural)
	structuraldefaulting.Default(obj, k.structural)

	if errs := checkExponents(nil, obj, k.structural); len(errs) > 0 {
		return &InvalidError{GroupKind: gvk.GroupKind(), Name: u.GetName(), Errors: errs}
	}
	if errs := k.validate(ctx, u); len(errs) > 0 {
		return &InvalidError{GroupKind: gvk.GroupKind(), Name: u.GetName(), Errors: errs}
	}
	return nil
}

// validate mirrors the custom resource strategy's Validate for a create.
func (k *kindSchema) validate(ctx context.Context, u *unstructured.Unstructured) field.ErrorList {
	var errs field.ErrorList
	if u.GetAPIVersion() != k.gvk.GroupVersion().String() {
		errs = append(errs, field.Invalid(field.NewPath("apiVersion"), u.GetAPIVersion(), "must be "+k.gvk.GroupVersion().String()))
	}
	errs = append(errs, validation.ValidateObjectMetaAccessor(u, k.namespaced, validation.NameIsDNSSubdomain, field.NewPath("metadata"))...)
	errs = append(errs, apiservervalidation.ValidateCustomResource(nil, u.Object, k.validator)...)
	errs = append(errs, schemaobjectmeta.Validate(nil, u.Object, k.structural, false)...)
	errs = append(errs, structurallisttype.ValidateListSetsAndMaps(nil, k.structural, u.Object)...)
	if k.cel == nil {
		return errs
	}
	// Like the API server, skip the CEL rules when the object is too broken for them to run
	// meaningfully, and say so.
	for _, e := range errs {
		switch e.Type {
		case field.ErrorTypeNotSupported, field.ErrorTypeRequired, field.ErrorTypeTooLong, field.ErrorTypeTooMany, field.ErrorTypeTypeInvalid:
			return append(errs, field.Invalid(nil, nil, "some validation rules were not checked because the object was invalid; correct the existing errors to complete validation"))
		}
	}
	celErrs, _ := k.cel.Validate(ctx, nil, k.structural, u.Object, nil, celconfig.RuntimeCELCostBudget)
	return append(errs, celErrs...)
}

// hugeExponent matches a number written with a decimal exponent of four digits or more.
var hugeExponent = regexp.MustCompile(`^[+-]?[0-9.]*[eE][+-]?[0-9]{4,}$`)

// checkExponents refuses quantities such as "1e999999999" before the CEL rules see them. They are
// valid Quantities, but comparing one with another expands it to a billion digits: the API
// server's CEL quantity functions would run until the request times out, and the CLI would
// hang. Only int-or-string fields (where quantities live) are looked at.
func checkExponents(pth *field.Path, x any, s *structuralschema.Structural) field.ErrorList {
	if s == nil {
		return nil
	}
	var errs field.ErrorList
	switch v := x.(type) {
	case string:
		if s.XIntOrString && hugeExponent.MatchString(v) {
			errs = append(errs, field.Invalid(pth, v, "the exponent is too large to evaluate: write the quantity with at most three exponent digits"))
		}
	case map[string]any:
		keys := make([]string, 0, len(v))
		for key := range v {
			keys = append(keys, key)
		}
		sort.Strings(keys) // deterministic messages
		for _, key := range keys {
			child := v[key]
			if prop, ok := s.Properties[key]; ok {
				errs = append(errs, checkExponents(pth.Child(key), child, &prop)...)
			} else if s.AdditionalProperties != nil && s.AdditionalProperties.Structural != nil {
				errs = append(errs, checkExponents(pth.Key(key), child, s.AdditionalProperties.Structural)...)
			}
		}
	case []any:
		for i, child := range v {
			errs = append(errs, checkExponents(pth.Index(i), child, s.Items)...)
		}
	}
	return errs
}
