package awarddoc

import (
	"bytes"
	_ "embed"
	"fmt"
	"html/template"
	"unicode/utf8"

	"github.com/pcourt/pcourt/libs/award"
)

//go:embed award.html
var pageTemplate string

var htmlPage = template.Must(template.New("award").Parse(pageTemplate))

// HTML renders d as the award's html artifact: one standalone HTML5 page
// (its CSS inline, no script, nothing fetched) that reads on a screen and
// prints on A4. awardHash must be d's hash (award.Hash of its canonical
// bytes); else the error wraps ErrHashMismatch.
func HTML(d award.Document, awardHash string) ([]byte, error) {
	p, err := newPage(d, awardHash)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	if err := htmlPage.Execute(&b, p); err != nil {
		return nil, fmt.Errorf("rendering the html of award %s: %w", d.AwardID, err)
	}
	return validUTF8(b.Bytes()), nil
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
