package respond

import (
	"fmt"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/pcourt/pcourt/services/cases/internal/awarddoc"
	"github.com/pcourt/pcourt/services/cases/internal/procedure"
)

// awardMedia are the award's artifacts the page serves, with their media
// types: the same stored bytes the API's award/artifacts routes serve.
var awardMedia = map[string]string{
	"json":        "application/json",
	"html":        "text/html; charset=utf-8",
	"pdf":         "application/pdf",
	"attestation": "application/jose",
}

// awardArtifact serves one artifact of the issued award to a session of
// the case. Links are plain GETs, so only the session is checked (no
// CSRF: reading changes nothing). The html artifact is a document of its
// own, not one of the page's: it carries its style inline, which the
// page's policy (style-src 'self') would refuse, so it gets a policy of
// its own that admits exactly its style element, by hash, and nothing
// else (no script, no request, sandboxed).
func (p *page) awardArtifact(c *gin.Context) {
	id, kind := c.Param("caseId"), c.Param("kind")
	media, known := awardMedia[kind]
	if !procedure.ValidCaseID(id) || !known {
		p.refuse(c, refusalNotFound(id))
		return
	}
	noSession := refusal{Status: http.StatusForbidden, Code: "no_session", CaseID: id,
		Title: "You are not signed in", Detail: "This browser holds no session of this case, or it ended."}
	v, err := p.viewer(c, id)
	if err != nil {
		p.fail(c, id, err)
		return
	}
	if !v.any() {
		p.refuse(c, noSession)
		return
	}
	l, err := p.cases.Load(c.Request.Context(), id)
	if err != nil {
		p.fail(c, id, err)
		return
	}
	if !v.hasHosted && len(v.actable(l.Case)) == 0 {
		p.refuse(c, noSession) // an account session of nobody in this case
		return
	}
	a := l.Case.Tribunal.Award
	if a == nil {
		p.refuse(c, refusal{Status: http.StatusNotFound, Code: "award_not_issued", CaseID: id, Back: p.pagePath(id),
			Title: "No award yet", Detail: "The tribunal has not issued the award of this case."})
		return
	}
	digest := map[string]string{"json": a.AwardHash, "html": a.HTMLDigest, "pdf": a.PDFDigest, "attestation": a.AttestationDigest}[kind]
	b, found, err := p.cases.Document(c.Request.Context(), id, digest)
	if err == nil && !found {
		err = fmt.Errorf("case %s: award artifact %s is missing", id, digest)
	}
	if err != nil {
		p.fail(c, id, err)
		return
	}
	ext := map[string]string{"attestation": "jws"}[kind]
	if ext == "" {
		ext = kind
	}
	if kind == "html" {
		c.Header("Content-Security-Policy", artifactPolicy(b))
	}
	c.Header("Cache-Control", "private, no-store")
	c.Header("Digest-SHA256", digest)
	c.Header("Content-Disposition", `inline; filename="award-`+id+`.`+ext+`"`)
	c.Data(http.StatusOK, media, b)
}

// artifactPolicy is the Content-Security-Policy of an html artifact: its
// own style element, by hash (awarddoc.StyleSource), and nothing else.
func artifactPolicy(html []byte) string {
	style := ""
	if src, ok := awarddoc.StyleSource(html); ok {
		style = "style-src " + src + "; "
	}
	return "default-src 'none'; " + style + "form-action 'none'; frame-ancestors 'none'; base-uri 'none'; sandbox"
}
