package proxy

import "testing"

// A parameter stands for one non-empty segment; every other segment is
// compared exactly, and the two must have as many segments.
func TestATransferPatternMatchesOneSegmentPerParameter(t *testing.T) {
	for _, c := range []struct {
		pattern, path string
		want          bool
	}{
		{"/api/cases/{id}/evidence", "/api/cases/case_1/evidence", true},
		{"/api/cases/{id}/evidence", "/api/cases//evidence", false},
		{"/api/cases/{id}/evidence", "/api/cases/case_1/evidence/", false},
		{"/api/cases/{id}/evidence", "/api/cases/case_1", false},
		{"/api/cases/{id}/evidence", "/api/cases/case_1/evidences", false},
		{"/api/cases/{id}/evidence/{evidenceId}", "/api/cases/c/evidence/e", true},
		{"/api/cases/{id}/evidence/{evidenceId}", "/api/cases/c/evidence/e/x", false},
		{"/api/cases/{id}/evidence/{evidenceId}", "/api/cases/c/evidence", false},
		{"/api/x", "/api/x", true},
		{"/api/x", "/api/y", false},
	} {
		if got := matches(c.pattern, c.path); got != c.want {
			t.Errorf("matches(%q, %q) = %v, want %v", c.pattern, c.path, got, c.want)
		}
	}
}
