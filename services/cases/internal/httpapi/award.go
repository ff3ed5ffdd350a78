package httpapi

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/pcourt/pcourt/libs/award"
	"github.com/pcourt/pcourt/libs/problem"
	"github.com/pcourt/pcourt/services/cases/internal/procedure"
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
	// Served says this is the case's served award; an amended one is
	// read with ?awardHash= and names the award that amends it
	// (SupersededBy). Final and FinalAt say the served award is final.
	Served       bool   `json:"served"`
	SupersededBy string `json:"supersededBy,omitempty"`
	Final        bool   `json:"final"`
	FinalAt      string `json:"finalAt,omitempty"`
}

// artifactKinds are the artifacts of an award, with their media types.
var artifactKinds = map[string]string{
	"json": "application/json",
	"html": "text/html; charset=utf-8",
	"pdf":  "application/pdf",
}

func (h *handlers) getAward(c *gin.Context) {
	id, a, l, ok := h.issuedCase(c)
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
	base, query := "/api/cases/"+id+"/award/artifacts/", ""
	v := awardView{Document: doc, AwardHash: a.AwardHash, KeyID: a.KeyID, Served: a.AwardHash == l.Tribunal.Award.AwardHash}
	if v.Served {
		v.Final, v.FinalAt = l.AfterAward.Final(), ts(l.AfterAward.FinalAt)
	} else {
		query = "?awardHash=" + a.AwardHash
		v.SupersededBy = supersededBy(l, a.AwardHash)
	}
	v.Artifacts = map[string]string{"json": base + "json" + query, "html": base + "html" + query, "pdf": base + "pdf" + query, "attestation": base + "json/attestation" + query}
	private(c, v)
}

// supersededBy is the award that amended the award with hash h.
func supersededBy(c procedure.Case, h string) string {
	for _, r := range c.AfterAward.Requests {
		if r.AwardHash == h && r.IssuedAwardHash != "" {
			return r.IssuedAwardHash
		}
	}
	return ""
}

// issued loads the case and the award a read names: the served one, or
// with ?awardHash= one it amended (every award of a case stays readable
// and byte-identical). Before the award, or for a hash that is none of
// the case's awards, it answers 404 award_not_issued.
func (h *handlers) issued(c *gin.Context) (string, *tribunal.Issued, bool) {
	id, a, _, ok := h.issuedCase(c)
	return id, a, ok
}

func (h *handlers) issuedCase(c *gin.Context) (string, *tribunal.Issued, procedure.Case, bool) {
	_, l, err := h.load(c, caseID(c))
	if err == nil && l.Case.Tribunal.Award == nil {
		err = problem.Newf(AwardNotIssued, "Case %s has no award yet; GET decision-status says what the decision waits for.", l.Case.ID)
	}
	if err != nil {
		_ = c.Error(err)
		return "", nil, procedure.Case{}, false
	}
	a := l.Case.Tribunal.Award
	if want, named := c.GetQuery("awardHash"); named && want != a.AwardHash {
		a = nil
		for _, old := range l.Case.AfterAward.Superseded {
			if old.AwardHash == want {
				a = &old
			}
		}
		if a == nil {
			_ = c.Error(problem.Newf(AwardNotIssued, "Case %s has no award %s.", l.Case.ID, problem.Clip(want)))
			return "", nil, procedure.Case{}, false
		}
	}
	return l.Case.ID, a, l.Case, true
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
