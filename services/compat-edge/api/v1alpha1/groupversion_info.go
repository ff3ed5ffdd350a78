// Package v1alpha1 is the compat.pcourt.dev/v1alpha1 API: the
// CompatibilityFamily resource, one per compatibility family, through which
// an operator sets a family's general availability date, its retirement
// stage, its brownouts and the integrations' approved extensions. It
// imports only apimachinery, so anything may import it.
//
// +kubebuilder:object:generate=true
// +groupName=compat.pcourt.dev
package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var (
	// GroupVersion is the API group and version of these types.
	GroupVersion = schema.GroupVersion{Group: "compat.pcourt.dev", Version: "v1alpha1"}

	// SchemeBuilder registers these types with a scheme.
	SchemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)

	// AddToScheme adds these types to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

func addKnownTypes(s *runtime.Scheme) error {
	s.AddKnownTypes(GroupVersion, &CompatibilityFamily{}, &CompatibilityFamilyList{})
	metav1.AddToGroupVersion(s, GroupVersion)
	return nil
}
