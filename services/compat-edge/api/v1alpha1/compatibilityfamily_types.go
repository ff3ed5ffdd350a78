package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// CompatibilityFamilySpec is what an operator decides for one family.
type CompatibilityFamilySpec struct {
	// Family is the compatibility family the resource governs.
	// +kubebuilder:validation:Enum=v2-filings;v2-cases;website-cases
	Family string `json:"family"`

	// GeneralAvailabilityDate is the day the canonical routes became
	// generally available, YYYY-MM-DD (UTC); the window starts that day
	// and ends 180 days later. Unset leaves the date to the environment.
	// +kubebuilder:validation:Pattern=`^[0-9]{4}-[0-9]{2}-[0-9]{2}$`
	// +optional
	GeneralAvailabilityDate string `json:"generalAvailabilityDate,omitempty"`

	// Stage is how far retirement has gone; it acts only after the window
	// ends, for each integration at its own deadline.
	// +kubebuilder:validation:Enum=warn;brownout;retired
	// +kubebuilder:default=warn
	// +optional
	Stage string `json:"stage,omitempty"`

	// Extensions are approved later deadlines, one per integration (a
	// credential's public id or a partner id).
	// +listType=map
	// +listMapKey=integration
	// +optional
	Extensions []Extension `json:"extensions,omitempty"`

	// Brownouts are short scheduled windows (at most 24 hours each) in
	// which, in stage brownout and after the window ends, aliases answer
	// 410.
	// +optional
	Brownouts []Brownout `json:"brownouts,omitempty"`
}

// Extension is one integration's approved later deadline.
type Extension struct {
	// Integration is a credential's public id or a partner id.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=200
	Integration string `json:"integration"`

	// Sunset is the approved deadline, YYYY-MM-DD (UTC).
	// +kubebuilder:validation:Pattern=`^[0-9]{4}-[0-9]{2}-[0-9]{2}$`
	Sunset string `json:"sunset"`

	// ApprovedBy names who approved it.
	// +kubebuilder:validation:MinLength=1
	ApprovedBy string `json:"approvedBy"`

	// ApprovedAt is when it was approved.
	ApprovedAt metav1.Time `json:"approvedAt"`
}

// Brownout is one scheduled brownout, [start, end).
type Brownout struct {
	// Start is an RFC 3339 date-time.
	Start metav1.Time `json:"start"`
	// End is an RFC 3339 date-time after Start.
	End metav1.Time `json:"end"`
}

// Milestone is the next e-mail notice of the window and when it falls due.
type Milestone struct {
	// Name is window-start, 90-days-left, 30-days-left, 7-days-left or
	// retired.
	Name string `json:"name"`
	// At is when it falls due.
	At metav1.Time `json:"at"`
}

// CompatibilityFamilyStatus is what the controller computed.
type CompatibilityFamilyStatus struct {
	// ObservedGeneration is the generation the status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// WindowEnd is the base window's end, YYYY-MM-DD: the general
	// availability date plus 180 days (an integration's extension can
	// only move its own end later).
	// +optional
	WindowEnd string `json:"windowEnd,omitempty"`

	// NextMilestone is the next notice of the base window; unset when
	// none is to come.
	// +optional
	NextMilestone *Milestone `json:"nextMilestone,omitempty"`

	// Conditions: Ready (the edge acts on the spec) and Invalid (it does
	// not, with the reason).
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// CompatibilityFamily sets one compatibility family's policy at the edge.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Namespaced,shortName=cfam
// +kubebuilder:printcolumn:name="Family",type=string,JSONPath=`.spec.family`
// +kubebuilder:printcolumn:name="GA",type=string,JSONPath=`.spec.generalAvailabilityDate`
// +kubebuilder:printcolumn:name="Stage",type=string,JSONPath=`.spec.stage`
// +kubebuilder:printcolumn:name="Window end",type=string,JSONPath=`.status.windowEnd`
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
type CompatibilityFamily struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   CompatibilityFamilySpec   `json:"spec,omitempty"`
	Status CompatibilityFamilyStatus `json:"status,omitempty"`
}

// CompatibilityFamilyList is a list of CompatibilityFamily.
//
// +kubebuilder:object:root=true
type CompatibilityFamilyList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []CompatibilityFamily `json:"items"`
}
