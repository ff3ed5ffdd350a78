package httpapi

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/pcourt/pcourt/libs/award"
	"github.com/pcourt/pcourt/libs/problem"
	"github.com/pcourt/pcourt/services/cases/internal/tribunal"
)

// The award and its artifacts. An award is read from its json artifact,
// the exact bytes its awardHash is the digest of, kept with the case's
// documents when it was issued; nothing here re-renders it, so every read
// of every artifact is byte-identical, across restarts and replicas.

// KeySet publishes the award signing keys (internal/awardkeys).
type KeySet interface {
	JWKS(ctx context.Context) ([]byte, error)
}

// awardView is GET award: the award document with its identity and where
// its artifacts are.
type awardView struct {
	award.Document
	AwardHash string            `json:"awardHash"`
	KeyID     string            `json:"keyId"`
	Artifacts map[string]string `json:"artifacts"`
}

// artifactKinds are the artifacts of an award, with their media types.
var artifactKinds = map[string]string{
	"json": "application/json",
	"html": "text/html; charset=utf-8",
	"pdf":  "application/pdf",
}

func (h *handlers) getAward(c *gin.Context) {
	id, a, ok := h.issued(c)
	if !ok {
		return
	}
	raw, found, err := h.cases.Document(c.Request.Context(), id, a.AwardHash)
	if err == nil && !found {
		err = fmt.Errorf("case %s: the json artifact of award %s is missing", id, a.AwardHash)
	}
	var doc award.Document
	if err == nil {
		err = json.Unmarshal(raw, &doc)
	}
	if err != nil {
		_ = c.Error(err)
		return
	}
	base := "/api/cases/" + id + "/award/artifacts/"
	private(c, awardView{Document: doc, AwardHash: a.AwardHash, KeyID: a.KeyID, Artifacts: map[string]string{
		"json": base + "json", "html": base + "html", "pdf": base + "pdf", "attestation": base + "json/attestation",
	}})
}

// issued loads the case and its issued award, or answers 404
// award_not_issued.
func (h *handlers) issued(c *gin.Context) (string, *tribunal.Issued, bool) {
	_, l, err := h.load(c, caseID(c))
	if err == nil && l.Case.Tribunal.Award == nil {
		err = problem.Newf(AwardNotIssued, "Case %s has no award yet; GET decision-status says what the decision waits for.", l.Case.ID)
	}
	if err != nil {
		_ = c.Error(err)
		return "", nil, false
	}
	return l.Case.ID, l.Case.Tribunal.Award, true
}

// getArtifact serves one artifact's stored bytes, with its digest. The
// bytes never change, so a validator (the ETag) lets a client keep them;
// they are private to the case's parties and tribunal.
func (h *handlers) getArtifact(c *gin.Context) {
	kind := c.Param("kind")
	mediaType, known := artifactKinds[kind]
	if !known {
		_ = c.Error(problem.Newf(problem.NotFound, "An award has the artifacts json, html, pdf and json/attestation, not %q.", problem.Clip(kind)))
		return
	}
	id, a, ok := h.issued(c)
	if !ok {
		return
	}
	digest := map[string]string{"json": a.AwardHash, "html": a.HTMLDigest, "pdf": a.PDFDigest}[kind]
	h.serveDocument(c, id, digest, mediaType, "award-"+id+"."+kind)
}

func (h *handlers) getAttestation(c *gin.Context) {
	if id, a, ok := h.issued(c); ok {
		h.serveDocument(c, id, a.AttestationDigest, "application/jose", "award-"+id+".jws")
	}
}

func (h *handlers) serveDocument(c *gin.Context, caseID, digest, mediaType, filename string) {
	b, found, err := h.cases.Document(c.Request.Context(), caseID, digest)
	if err == nil && !found {
		err = fmt.Errorf("case %s: award artifact %s is missing", caseID, digest)
	}
	if err != nil {
		_ = c.Error(err)
		return
	}
	etag := `"sha256-` + digest + `"`
	c.Header("Cache-Control", "private, no-store")
	c.Header("ETag", etag)
	c.Header("X-Content-Type-Options", "nosniff")
	c.Header("Digest-SHA256", digest)
	c.Header("Content-Disposition", `inline; filename="`+filename+`"`)
	if c.GetHeader("If-None-Match") == etag {
		c.Status(http.StatusNotModified)
		return
	}
	c.Data(http.StatusOK, mediaType, b)
}

// awardKeys is GET /api/awards/keys: every key that ever signed an award,
// public and cacheable.
func (h *handlers) awardKeys(c *gin.Context) {
	b, err := h.keys.JWKS(c.Request.Context())
	if err != nil {
		_ = c.Error(err)
		return
	}
	c.Header("Cache-Control", "public, max-age=300")
	c.Data(http.StatusOK, "application/jwk-set+json", b)
}
