package httpapi

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/pcourt/pcourt/libs/problem"
	"github.com/pcourt/pcourt/services/cases/internal/procedure"
	"github.com/pcourt/pcourt/services/cases/internal/recordbundle"
)

// Signer signs bytes with the award keys: the key id and a compact
// detached JWS (awardkeys.Ring).
type Signer interface {
	SignDetached(payload []byte) (keyID, attestation string, err error)
}

// RecordNotClosed answers a record bundle asked for before the record is
// confirmed: there is no record to bundle yet.
var RecordNotClosed = problem.Code{Name: "record_not_closed", Status: http.StatusConflict, Title: "Record not closed"}

// recordBundle answers GET record-bundle (three forms): the confirmed
// record as one zip archive (internal/recordbundle) with its signed
// manifest, to whoever sees the case. The bundle holds the record as the
// case stands: the summary, the answer's and submissions' texts, the
// corrections, the disclosed exhibits, and the docket up to its last
// event (the manifest's docketSequence); the same state gives the same
// bytes.
func (h *handlers) recordBundle(c *gin.Context) {
	_, l, err := h.load(c, caseID(c))
	if err != nil {
		_ = c.Error(err)
		return
	}
	cs := l.Case
	if cs.Closed != procedure.StatusRecordConfirmed {
		_ = c.Error(problem.Newf(RecordNotClosed, "The record of case %s is not confirmed yet (status %s): its bundle exists once the record closes.", cs.ID, cs.Status()))
		return
	}
	ctx := c.Request.Context()
	parts, err := h.bundleParts(ctx, cs, l.Sequence)
	if err != nil {
		_ = c.Error(err)
		return
	}
	manifest, err := recordbundle.ManifestBytes(recordbundle.Manifest{CaseID: cs.ID, RulesVersion: cs.Rules.Version, RulesHash: cs.Rules.Hash,
		RecordClosedAt: ts(cs.ClosedAt), SummaryDigest: cs.RecordDigest(), DocketSequence: l.Sequence}, parts)
	if err != nil {
		_ = c.Error(err)
		return
	}
	_, jws, err := h.signer.SignDetached(manifest)
	if err != nil {
		_ = c.Error(err)
		return
	}
	hdr := c.Writer.Header()
	hdr.Set("Content-Type", "application/zip")
	hdr.Set("Content-Disposition", fmt.Sprintf("attachment; filename=%q", "record-"+cs.ID+".zip"))
	hdr.Set("X-Content-Type-Options", "nosniff")
	hdr.Set("Cache-Control", "private, no-store")
	hdr.Set("ETag", `"`+digestOf(string(manifest))+`"`)
	c.Status(http.StatusOK)
	if err := recordbundle.Write(c.Writer, manifest, jws, parts, cs.ClosedAt); err != nil {
		// The status is sent: the archive ends unfinished, which a zip
		// reader reports, and the log says why.
		h.logger.ErrorContext(ctx, "record bundle broke off", "case_id", cs.ID, "error", err)
	}
}

// bundleParts are the bundle's files in archive order.
func (h *handlers) bundleParts(ctx context.Context, cs procedure.Case, docketSequence int64) ([]recordbundle.Part, error) {
	summary, err := json.Marshal(struct {
		CaseID        string                  `json:"caseId"`
		SummaryDigest string                  `json:"summaryDigest"`
		Summary       procedure.RecordSummary `json:"summary"`
	}{cs.ID, cs.RecordDigest(), cs.RecordSummary()})
	if err != nil {
		return nil, err
	}
	docket, err := h.cases.Docket(ctx, cs.ID, 1, docketSequence)
	if err != nil {
		return nil, err
	}
	docketJSON, err := json.Marshal(docket)
	if err != nil {
		return nil, err
	}
	parts := []recordbundle.Part{
		recordbundle.Bytes("summary.json", "application/json", summary),
		recordbundle.Bytes("docket.json", "application/json", docketJSON),
	}
	text := func(path, digest string) error {
		b, ok, err := h.cases.Document(ctx, cs.ID, digest)
		if err != nil {
			return err
		}
		if !ok {
			return fmt.Errorf("case %s keeps no text for %s (digest %s)", cs.ID, path, digest)
		}
		parts = append(parts, recordbundle.Bytes(path, "text/plain; charset=utf-8", b))
		return nil
	}
	if a := cs.Answer; a != nil {
		if err := text("answer.txt", a.Digest); err != nil {
			return nil, err
		}
	}
	for _, s := range cs.Submissions {
		if err := text("submissions/"+s.ID+".txt", s.Digest); err != nil {
			return nil, err
		}
	}
	for _, corr := range cs.RecordSummary().Corrections {
		if err := text("corrections/"+corr.ID+".txt", corr.Digest); err != nil {
			return nil, err
		}
	}
	for _, e := range cs.Evidence.Record() {
		parts = append(parts, recordbundle.Stored("exhibits/"+e.ID+"/"+e.FileName, e.MediaType, e.Size, e.SHA256, func() (io.ReadCloser, error) {
			return h.evidence.Open(ctx, cs.ID, e)
		}))
	}
	return parts, nil
}
