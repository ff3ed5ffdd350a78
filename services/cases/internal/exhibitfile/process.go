package exhibitfile

import (
	"fmt"
	"io"
	"os"
	"path"
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxTextRunes caps Processing.Text, in characters.
const MaxTextRunes = 100_000

// MaxDescriptionRunes caps Processing.SuggestedDescription, in characters.
const MaxDescriptionRunes = 280

// Processing is what Take reads from an accepted file: the start of the
// exhibit's processing record. The same bytes give the same Processing.
type Processing struct {
	// Text is the file's text, valid UTF-8, at most MaxTextRunes
	// characters: the whole file for text/plain, text/csv and
	// application/json (a byte-order mark and the white space around it
	// left out); for a PDF, the text of its uncompressed content streams
	// (see scanPDF), often none; none for an image.
	Text string
	// TextTruncated reports text cut at MaxTextRunes.
	TextTruncated bool
	// PageCount is 1 for an image; a PDF's page objects as scanPDF counts
	// them, 0 when they are compressed out of its sight (unknown); 0 for
	// text, which has no pages until it is printed.
	PageCount int
	// SuggestedDescription is a first description the offering side may
	// edit, at most MaxDescriptionRunes characters on one line: the first
	// line of the text (for text/plain, text/csv and a PDF with text) that
	// has a letter or a digit, its white space collapsed; else the file
	// name without its extension, underscores as spaces.
	SuggestedDescription string
}

// process reads an accepted file for its Processing.
func process(f *os.File, size int64, t MediaType, name string) (Processing, error) {
	var p Processing
	var text textBuilder
	switch {
	case t.isText():
		text = textBuilder{max: MaxTextRunes}
		r := reader(f, 0, size)
		if bom, _ := r.Peek(len(utf8BOM)); string(bom) == utf8BOM {
			r.Discard(len(utf8BOM))
		}
		for !text.full() {
			c, _, err := r.ReadRune()
			if err == io.EOF {
				break
			}
			if err != nil {
				return Processing{}, fmt.Errorf("reading spool file: %w", err)
			}
			text.rawRune(c)
		}
		if text.full() {
			if _, err := r.Peek(1); err == nil {
				text.truncated = true
			}
		}
	case t == PDF:
		var err error
		if p.PageCount, text, err = scanPDF(f, size); err != nil {
			return Processing{}, fmt.Errorf("reading spool file: %w", err)
		}
	default: // an image
		p.PageCount = 1
	}
	p.Text = strings.TrimSpace(text.b.String())
	p.TextTruncated = text.truncated
	if t != JSON {
		p.SuggestedDescription = firstLine(p.Text)
	}
	if p.SuggestedDescription == "" {
		p.SuggestedDescription = fromName(name)
	}
	return p, nil
}

// textBuilder gathers at most max characters of text.
type textBuilder struct {
	b         strings.Builder
	n, max    int
	truncated bool
	lastLF    bool
}

func (t *textBuilder) full() bool { return t.n >= t.max }

// rawRune adds r as it is (a text file's own characters).
func (t *textBuilder) rawRune(r rune) {
	if t.full() {
		t.truncated = true
		return
	}
	t.b.WriteRune(r)
	t.n++
	t.lastLF = r == '\n'
}

// rune adds a character read out of a binary format, dropping controls
// other than tab and line feed and anything not a valid character.
func (t *textBuilder) rune(r rune) {
	switch {
	case r == '\r':
		r = '\n'
	case r == utf8.RuneError, r != '\n' && r != '\t' && unicode.IsControl(r):
		return
	}
	if r == '\n' && (t.lastLF || t.n == 0) {
		return
	}
	t.rawRune(r)
}

// newline ends the current line, once.
func (t *textBuilder) newline() { t.rune('\n') }

// firstLine is the text's first line with a letter or a digit, its white
// space collapsed, capped.
func firstLine(text string) string {
	for line := range strings.Lines(text) {
		if !strings.ContainsFunc(line, func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }) {
			continue
		}
		return capRunes(strings.Join(strings.Fields(line), " "), MaxDescriptionRunes)
	}
	return ""
}

// fromName is a description from a file name: "site_photo_2.jpg" gives
// "site photo 2".
func fromName(name string) string {
	base := strings.TrimSuffix(name, path.Ext(name))
	if base == "" {
		base = name
	}
	return capRunes(strings.Join(strings.Fields(strings.ReplaceAll(base, "_", " ")), " "), MaxDescriptionRunes)
}

// capRunes cuts s to at most n characters, the last an ellipsis when cut.
func capRunes(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)[:n-1]
	return strings.TrimRightFunc(string(r), unicode.IsSpace) + "…"
}
