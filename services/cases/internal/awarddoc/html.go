package awarddoc

import (
	"bytes"
	"crypto/sha256"
	_ "embed"
	"encoding/base64"
	"fmt"
	"html/template"
	"slices"
	"unicode/utf8"

	"github.com/pcourt/pcourt/libs/award"
	"github.com/pcourt/pcourt/libs/webpage"
)

//go:embed award.html
var pageTemplate string

var htmlPage = template.Must(template.New("award").Parse(pageTemplate))

//go:embed award.css
var awardCSS []byte

// pageStyle is the html artifact's one style element: the design system's
// base (webpage.BaseStylesheet: its colours with the dark scheme, type,
// spacing, tables), then the award's own rules and its print stylesheet
// (award.css). It is fixed bytes, so the same award always gives the same
// page; a change of either part is a new look of every award issued after
// it, while those issued before keep the bytes they were issued with.
var pageStyle = template.CSS(slices.Concat(webpage.BaseStylesheet, []byte("\n"), awardCSS))

// HTML renders d as the award's html artifact: one standalone HTML5 page
// (its CSS inline, the design system's, no script, nothing fetched) that
// reads on a screen, light or dark, and prints on A4. awardHash must be d's hash (award.Hash of its canonical
// bytes); else the error wraps ErrHashMismatch.
func HTML(d award.Document, awardHash string) ([]byte, error) {
	p, err := newPage(d, awardHash)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	if err := htmlPage.Execute(&b, htmlView{page: p, Style: pageStyle}); err != nil {
		return nil, fmt.Errorf("rendering the html of award %s: %w", d.AwardID, err)
	}
	return validUTF8(b.Bytes()), nil
}

// StyleSource is the Content-Security-Policy source that admits the one
// style element of an html artifact and nothing else: 'sha256-…' of its
// text. A page serving the artifact under a policy without
// 'unsafe-inline' names it in style-src, so the artifact keeps its look
// and no other style applies; an artifact issued before it had its look,
// or any other bytes, gets the hash of its own first style element. ok is
// false when page has none.
func StyleSource(page []byte) (source string, ok bool) {
	_, rest, found := bytes.Cut(page, []byte("<style>"))
	if !found {
		return "", false
	}
	css, _, found := bytes.Cut(rest, []byte("</style>"))
	if !found {
		return "", false
	}
	sum := sha256.Sum256(css)
	return "'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'", true
}

// htmlView is what the html template reads: the page's facts and its style.
type htmlView struct {
	page
	Style template.CSS
}

// validUTF8 replaces each byte of b that is not UTF-8 with U+FFFD, as
// encoding/json does in the json artifact. The template is UTF-8 and
// escaping rewrites ASCII only, so such bytes came from the document.
func validUTF8(b []byte) []byte {
	if utf8.Valid(b) {
		return b
	}
	out := make([]byte, 0, len(b)+16)
	for len(b) > 0 {
		r, n := utf8.DecodeRune(b)
		if r == utf8.RuneError && n == 1 {
			out = utf8.AppendRune(out, utf8.RuneError)
		} else {
			out = append(out, b[:n]...)
		}
		b = b[n:]
	}
	return out
}
