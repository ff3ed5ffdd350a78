package v1alpha1_test

import (
	"os"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/pcourt/pcourt/services/compat-edge/api/v1alpha1"
	"github.com/pcourt/pcourt/services/compat-edge/internal/inventory"
	"github.com/pcourt/pcourt/services/compat-edge/internal/policy"
)

const crdPath = "../../config/crd/bases/compat.pcourt.dev_compatibilityfamilies.yaml"

// The shipped CRD is the Go type's: the same group, kind and scope, the
// status subresource, and, at every level, the same properties, the same
// required ones and the enums the policy knows. Regenerate it with
// `make generate` when the type changes.
func TestCRDMatchesTheGoType(t *testing.T) {
	raw, err := os.ReadFile(crdPath)
	require.NoError(t, err)
	var crd apiextensionsv1.CustomResourceDefinition
	require.NoError(t, yaml.UnmarshalStrict(raw, &crd))

	require.Equal(t, "compatibilityfamilies.compat.pcourt.dev", crd.Name)
	require.Equal(t, v1alpha1.GroupVersion.Group, crd.Spec.Group)
	require.Equal(t, "CompatibilityFamily", crd.Spec.Names.Kind)
	require.Equal(t, "compatibilityfamilies", crd.Spec.Names.Plural)
	require.Equal(t, apiextensionsv1.NamespaceScoped, crd.Spec.Scope)
	require.Len(t, crd.Spec.Versions, 1)
	v := crd.Spec.Versions[0]
	require.Equal(t, v1alpha1.GroupVersion.Version, v.Name)
	require.True(t, v.Served)
	require.True(t, v.Storage)
	require.NotNil(t, v.Subresources)
	require.NotNil(t, v.Subresources.Status, "status is a subresource: the reconciler writes only it")

	root := v.Schema.OpenAPIV3Schema
	spec, status := root.Properties["spec"], root.Properties["status"]
	checkStruct(t, "spec", reflect.TypeFor[v1alpha1.CompatibilityFamilySpec](), spec)
	checkStruct(t, "status", reflect.TypeFor[v1alpha1.CompatibilityFamilyStatus](), status)

	families := make([]string, 0, len(inventory.Families))
	for _, f := range inventory.Families {
		families = append(families, string(f))
	}
	require.ElementsMatch(t, families, enum(spec.Properties["family"]))
	require.ElementsMatch(t, []string{string(policy.Warn), string(policy.Brownout), string(policy.Retired)}, enum(spec.Properties["stage"]))
	for _, p := range []apiextensionsv1.JSONSchemaProps{spec.Properties["generalAvailabilityDate"], spec.Properties["extensions"].Items.Schema.Properties["sunset"]} {
		require.Equal(t, `^[0-9]{4}-[0-9]{2}-[0-9]{2}$`, p.Pattern)
	}
	for _, name := range []string{"start", "end"} {
		require.Equal(t, "date-time", spec.Properties["brownouts"].Items.Schema.Properties[name].Format)
	}
}

var timeType = reflect.TypeFor[metav1.Time]()

// checkStruct holds a schema object to a Go struct, recursively.
func checkStruct(t *testing.T, path string, typ reflect.Type, s apiextensionsv1.JSONSchemaProps) {
	t.Helper()
	require.Equal(t, "object", s.Type, path)
	var fields, required []string
	for i := range typ.NumField() {
		f := typ.Field(i)
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		fields = append(fields, name)
		if !strings.Contains(opts, "omitempty") {
			required = append(required, name)
		}
		prop, ok := s.Properties[name]
		require.True(t, ok, "%s.%s is in the Go type but not in the CRD", path, name)
		ft := f.Type
		if ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		switch {
		case ft == timeType:
			require.Equal(t, "string", prop.Type, "%s.%s", path, name)
			require.Equal(t, "date-time", prop.Format, "%s.%s", path, name)
		case ft.Kind() == reflect.Struct:
			checkStruct(t, path+"."+name, ft, prop)
		case ft.Kind() == reflect.Slice:
			require.Equal(t, "array", prop.Type, "%s.%s", path, name)
			if ft.Elem().PkgPath() == reflect.TypeFor[v1alpha1.CompatibilityFamily]().PkgPath() {
				checkStruct(t, path+"."+name+"[]", ft.Elem(), *prop.Items.Schema)
			}
		case ft.Kind() == reflect.String:
			require.Equal(t, "string", prop.Type, "%s.%s", path, name)
		case ft.Kind() == reflect.Int64:
			require.Equal(t, "integer", prop.Type, "%s.%s", path, name)
		default:
			t.Fatalf("%s.%s: no check for %s", path, name, ft)
		}
	}
	var props []string
	for name := range s.Properties {
		props = append(props, name)
	}
	sort.Strings(fields)
	sort.Strings(props)
	require.Equal(t, fields, props, "%s: the CRD has exactly the Go type's properties", path)
	require.ElementsMatch(t, required, s.Required, "%s: required properties", path)
}

func enum(p apiextensionsv1.JSONSchemaProps) []string {
	var out []string
	for _, v := range p.Enum {
		var s string
		if err := yaml.Unmarshal(v.Raw, &s); err == nil {
			out = append(out, s)
		}
	}
	return out
}

// The Helm chart ships the generated CRD as it is (make generate copies
// it): what the chart installs is what the edge's types say.
func TestTheChartShipsTheGeneratedCRD(t *testing.T) {
	generated, err := os.ReadFile(crdPath)
	require.NoError(t, err)
	shipped, err := os.ReadFile("../../../../deploy/helm/pcourt/crds/compatibilityfamilies.yaml")
	require.NoError(t, err)
	require.Equal(t, string(generated), string(shipped), "run make generate")
}
