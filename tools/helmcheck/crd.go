package helmcheck

import (
	"errors"
	"fmt"
	"slices"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// CheckCRDSchema reports a version whose schema is not structural, the
// rule the API server applies to every apiextensions.k8s.io/v1 CRD (each
// field typed, no unknown-field tricks outside what is allowed).
func CheckCRDSchema(crd *apiextensionsv1.CustomResourceDefinition) error {
	var errs []error
	for _, v := range crd.Spec.Versions {
		if v.Schema == nil || v.Schema.OpenAPIV3Schema == nil {
			errs = append(errs, fmt.Errorf("version %s has no schema", v.Name))
			continue
		}
		internal := &apiextensions.JSONSchemaProps{}
		if err := apiextensionsv1.Convert_v1_JSONSchemaProps_To_apiextensions_JSONSchemaProps(v.Schema.OpenAPIV3Schema, internal, nil); err != nil {
			errs = append(errs, fmt.Errorf("version %s: converting the schema: %w", v.Name, err))
			continue
		}
		s, err := schema.NewStructural(internal)
		if err != nil {
			errs = append(errs, fmt.Errorf("version %s: %w", v.Name, err))
			continue
		}
		if list := schema.ValidateStructural(field.NewPath("spec", "versions").Key(v.Name).Child("schema", "openAPIV3Schema"), s); len(list) > 0 {
			errs = append(errs, fmt.Errorf("version %s is not structural: %w", v.Name, list.ToAggregate()))
		}
	}
	return errors.Join(errs...)
}

// Property returns the schema at a path of property names ("[]" steps
// into an array's items), or nil.
func Property(s *apiextensionsv1.JSONSchemaProps, path ...string) *apiextensionsv1.JSONSchemaProps {
	for _, p := range path {
		if s == nil {
			return nil
		}
		if p == "[]" {
			if s.Items == nil {
				return nil
			}
			s = s.Items.Schema
			continue
		}
		child, ok := s.Properties[p]
		if !ok {
			return nil
		}
		s = &child
	}
	return s
}

// Enum returns a schema's enum values as strings.
func Enum(s *apiextensionsv1.JSONSchemaProps) []string {
	var out []string
	for _, e := range s.Enum {
		out = append(out, string(e.Raw[1:len(e.Raw)-1]))
	}
	slices.Sort(out)
	return out
}
