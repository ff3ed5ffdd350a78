// Package controller is the compat-controller's Kubernetes side: it
// watches CompatibilityFamily resources on the replica holding the lease.
// The status reconciler validates each resource and writes its computed
// window and conditions; the layer writer saves the valid resources'
// settings into the edge's durable store, where every edge replica reads
// them at its policy refresh. Both decide with internal/policy, so the
// resource, the store and the environment are read by one set of rules.
package controller

import (
	"errors"
	"fmt"
	"sort"

	"github.com/pcourt/pcourt/services/compat-edge/api/v1alpha1"
	"github.com/pcourt/pcourt/services/compat-edge/internal/inventory"
	"github.com/pcourt/pcourt/services/compat-edge/internal/policy"
)

// Reasons on the Invalid and Ready conditions.
const (
	ReasonValid         = "Valid"
	ReasonInvalidSpec   = "InvalidSpec"
	ReasonDuplicate     = "DuplicateFamily"
	ConditionReady      = "Ready"
	ConditionInvalid    = "Invalid"
	sourcePrefix        = "CompatibilityFamily "
	maxBrownoutsPerSpec = 100
)

// Source names a resource as the source of a family's settings.
func Source(cf *v1alpha1.CompatibilityFamily) string {
	return sourcePrefix + cf.Namespace + "/" + cf.Name
}

// ToSettings validates a resource's spec and converts it to the policy's
// settings. The API server enforces the CRD's schema, but the edge does
// not rely on it: a resource written before a schema change, or a
// calendar-impossible date the pattern lets through, is refused here.
func ToSettings(cf *v1alpha1.CompatibilityFamily) (inventory.Family, policy.Settings, error) {
	spec := cf.Spec
	f := inventory.Family(spec.Family)
	var errs []error
	if !f.Valid() {
		errs = append(errs, fmt.Errorf("family %q is not v2-filings, v2-cases or website-cases", spec.Family))
	}
	s := policy.Settings{Stage: policy.Stage(spec.Stage), Source: Source(cf)}
	if spec.GeneralAvailabilityDate != "" {
		d, err := policy.ParseDate(spec.GeneralAvailabilityDate)
		if err != nil {
			errs = append(errs, fmt.Errorf("generalAvailabilityDate: %w", err))
		}
		s.GA = d
	}
	if len(spec.Brownouts) > maxBrownoutsPerSpec {
		errs = append(errs, fmt.Errorf("at most %d brownouts", maxBrownoutsPerSpec))
	}
	for _, b := range spec.Brownouts {
		s.Brownouts = append(s.Brownouts, policy.Span{Start: b.Start.UTC(), End: b.End.UTC()})
	}
	for i, e := range spec.Extensions {
		d, err := policy.ParseDate(e.Sunset)
		if err != nil {
			errs = append(errs, fmt.Errorf("extensions[%d].sunset: %w", i, err))
			continue
		}
		if e.ApprovedBy == "" {
			errs = append(errs, fmt.Errorf("extensions[%d].approvedBy is required", i))
		}
		if s.Extensions == nil {
			s.Extensions = map[string]policy.Date{}
		}
		if _, dup := s.Extensions[e.Integration]; dup {
			errs = append(errs, fmt.Errorf("extensions[%d]: integration %q is listed twice", i, e.Integration))
		}
		s.Extensions[e.Integration] = d
	}
	errs = append(errs, s.Validate())
	if err := errors.Join(errs...); err != nil {
		return f, policy.Settings{}, err
	}
	return f, s, nil
}

// Winners picks, for each family, the resource that governs it: the
// oldest (then the first by namespace and name) of those naming it. The
// others are duplicates and govern nothing; a winner that does not
// validate leaves its family to the admin API's settings and the
// environment rather than hand it to a younger resource.
func Winners(items []v1alpha1.CompatibilityFamily) map[inventory.Family]*v1alpha1.CompatibilityFamily {
	sorted := make([]*v1alpha1.CompatibilityFamily, 0, len(items))
	for i := range items {
		sorted = append(sorted, &items[i])
	}
	sort.SliceStable(sorted, func(i, j int) bool {
		a, b := sorted[i], sorted[j]
		if !a.CreationTimestamp.Equal(&b.CreationTimestamp) {
			return a.CreationTimestamp.Before(&b.CreationTimestamp)
		}
		if a.Namespace != b.Namespace {
			return a.Namespace < b.Namespace
		}
		return a.Name < b.Name
	})
	out := map[inventory.Family]*v1alpha1.CompatibilityFamily{}
	for _, cf := range sorted {
		f := inventory.Family(cf.Spec.Family)
		if _, taken := out[f]; !taken {
			out[f] = cf
		}
	}
	return out
}
