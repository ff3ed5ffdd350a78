// Package archive is the pure part of archiving closed cases out of Redis
// (docs/archiving.md): when a case is closed (ClosedAt), when it is due
// for the archive (Due), and the archive document, one JSON object that
// holds every Redis value of the case verbatim, with its SHA-256 digest
// (Encode, Decode). No I/O, no clock: the archiver (internal/archiveflow)
// reads and deletes the keys and writes the object; the store
// (internal/store) serves reads from a decoded Document.
package archive

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/pcourt/pcourt/services/cases/internal/afteraward"
	"github.com/pcourt/pcourt/services/cases/internal/procedure"
)

// ClosedAt returns when the case closed for good, and false while
// something can still happen to it:
//
//   - a terminated case closed at its termination: nothing more happens;
//   - an awarded or settled case closes when its served award is final
//     (its recourse windows lapsed, both sides waived, an appeal was
//     decided, or a consent award was issued) and no execution is
//     pending or failed (a failed one is retried by its own command); it
//     closes at the latest of its finality and its executions' last
//     attempts;
//   - any other case (its procedure or decision still runs, its award is
//     not final, a settlement is agreed but its consent award not yet
//     recorded) is not closed.
//
// A final award whose remedies nobody has executed is closed: the
// retention period (Due) is the time the sides still have to execute it
// on the platform.
func ClosedAt(c procedure.Case) (time.Time, bool) {
	switch c.Status() {
	case procedure.StatusTerminated:
		return c.ClosedAt, !c.ClosedAt.IsZero()
	case procedure.StatusAwarded, procedure.StatusSettled:
	default:
		return time.Time{}, false
	}
	aa := c.AfterAward
	if !aa.Final() {
		return time.Time{}, false
	}
	at := aa.FinalAt
	for _, e := range aa.Executions {
		if e.Status != afteraward.ExecutionCompleted {
			return time.Time{}, false
		}
		for _, a := range e.Attempts {
			if a.At.After(at) {
				at = a.At
			}
		}
		if e.Completion != nil && e.Completion.CompletedAt.After(at) {
			at = e.Completion.CompletedAt
		}
	}
	return at, true
}

// Due reports whether the case is closed and its retention after closing
// has passed at now. A retention of zero or less never archives.
func Due(c procedure.Case, now time.Time, retention time.Duration) bool {
	if retention <= 0 {
		return false
	}
	at, closed := ClosedAt(c)
	return closed && !now.Before(at.Add(retention))
}

// Format names the document's shape; a change of shape gets a new name,
// and readers keep reading every earlier one.
const Format = "pcourt-case-archive-v1"

// ContentType is the archive object's media type.
const ContentType = "application/json"

// Document is an archived case: every Redis value of the case, verbatim,
// as the store kept it (internal/store/cases.go lists the keys). Reading
// an archived case gives the handlers the very bytes they read while it
// was live, so every route answers as before.
type Document struct {
	// Format is always Format.
	Format string `json:"format"`
	CaseID string `json:"caseId"`
	// Tenant and Environment are the case's, for an operator reading the
	// bucket; access is decided from the record, as for a live case.
	Tenant      string `json:"tenant"`
	Environment string `json:"environment"`
	// ClosedAt is when the case closed (ClosedAt).
	ClosedAt time.Time `json:"closedAt"`
	// Case are the fields of the case hash (record, status, version, seq).
	Case map[string]string `json:"case"`
	// Docket are the docket's case-event-v2 bodies, in sequence order.
	Docket []string `json:"docket"`
	// Documents are the case's documents (answers' texts, award
	// artifacts), digest → content (base64 in JSON: an artifact may be a
	// PDF).
	Documents map[string][]byte `json:"documents"`
}

// ErrCorrupt means archive bytes do not decode to a document of a known
// format, or do not match their digest.
var ErrCorrupt = errors.New("corrupt case archive")

// Encode returns the document's bytes and their digest (SHA-256, lowercase
// hex). The same document always gives the same bytes (map keys sorted),
// so two replicas archiving the same version of a case write the same
// object. Values must be UTF-8, as everything the store writes as text
// is; anything else is refused rather than altered.
func Encode(d Document) ([]byte, string, error) {
	if d.Format != Format || d.CaseID == "" {
		return nil, "", fmt.Errorf("%w: format %q, case %q", ErrCorrupt, d.Format, d.CaseID)
	}
	for k, v := range d.Case {
		if !utf8.ValidString(k) || !utf8.ValidString(v) {
			return nil, "", fmt.Errorf("archiving case %s: case field %q is not UTF-8", d.CaseID, k)
		}
	}
	for i, v := range d.Docket {
		if !utf8.ValidString(v) {
			return nil, "", fmt.Errorf("archiving case %s: docket entry %d is not UTF-8", d.CaseID, i+1)
		}
	}
	b, err := json.Marshal(d)
	if err != nil {
		return nil, "", fmt.Errorf("archiving case %s: %w", d.CaseID, err)
	}
	return b, Digest(b), nil
}

// Digest is the SHA-256 of b, lowercase hex.
func Digest(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// Decode reads archive bytes that must have the digest the tombstone
// names.
func Decode(b []byte, digest string) (Document, error) {
	if got := Digest(b); got != digest {
		return Document{}, fmt.Errorf("%w: digest %s, the tombstone names %s", ErrCorrupt, got, digest)
	}
	var d Document
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&d); err != nil {
		return Document{}, fmt.Errorf("%w: %v", ErrCorrupt, err)
	}
	if d.Format != Format || d.CaseID == "" || d.Case["record"] == "" {
		return Document{}, fmt.Errorf("%w: format %q, case %q", ErrCorrupt, d.Format, d.CaseID)
	}
	return d, nil
}

// ObjectKey is where the archive of a case's version is kept. The version
// is part of it, so a case that changed after a replica wrote its archive
// (and so was not archived) is archived later under another key, never
// over an object a tombstone names.
func ObjectKey(tenant, environment, caseID string, version int64) string {
	return fmt.Sprintf("case-archives/%s/%s/%s/v%d.json", tenant, environment, caseID, version)
}
