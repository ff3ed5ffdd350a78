package exhibitfile

import (
	"bufio"
	"bytes"
	"compress/zlib"
	"fmt"
	"io"
	"os"
	"unicode/utf16"
)

// pdfTail is how far from the end a reader looks for %%EOF (the PDF
// specification's 1024 bytes).
const pdfTail = 1024

// pdfWhitespace are the PDF's white-space characters.
const pdfWhitespace = "\x00\t\n\f\r "

// checkPDF holds the PDF to its frame: it starts with "%PDF-" and a
// version, and its last %%EOF, within the file's last 1024 bytes, is
// followed by white space only. Bytes after %%EOF are a second file riding
// on the document and refuse as a polyglot; no %%EOF near the end is a
// truncated or foreign file. The objects between are not parsed: see
// scanPDF for what is read from them.
func checkPDF(f *os.File, size int64, head []byte) (*Refusal, error) {
	if len(head) < 8 || head[5] < '1' || head[5] > '9' || head[6] != '.' {
		return refuse(CodeContentInvalid, "the PDF header names no version"), nil
	}
	start := max(0, size-pdfTail)
	tail := make([]byte, size-start)
	if _, err := f.ReadAt(tail, start); err != nil {
		return nil, fmt.Errorf("reading spool file: %w", err)
	}
	i := bytes.LastIndex(tail, []byte("%%EOF"))
	if i < 0 {
		return refuse(CodeContentInvalid, "the PDF does not end with %%%%EOF"), nil
	}
	if rest := bytes.TrimLeft(tail[i+5:], pdfWhitespace); len(rest) > 0 {
		return refuse(CodePolyglot, "%d bytes follow the PDF's %%%%EOF", len(rest)), nil
	}
	return nil, nil
}

// maxContentStream is the largest uncompressed stream scanPDF reads text
// from; a larger one is skipped (text streams are small, images are not).
const maxContentStream = 1 << 20

// maxObjectStream is the largest compressed object stream scanPDF inflates
// for page objects; maxInflated caps what all of one file's inflate to.
const (
	maxObjectStream = 8 << 20
	maxInflated     = 64 << 20
)

// scanPDF reads a PDF once, front to back, in bounded memory, for its page
// count and its text. It is a heuristic, not a PDF parser (no PDF library
// is both small and well kept):
//
//   - The page count is the number of page objects, "/Type /Page" (not
//     "/Pages", the tree's inner nodes), in the file and in its object
//     streams (PDF 1.5 and later writers put objects in compressed
//     "/Type /ObjStm" streams): a FlateDecode object stream of at most
//     maxObjectStream bytes is inflated and read the same way, the file's
//     object streams together inflating to at most maxInflated bytes (a
//     compression bomb costs that much time, and no memory). Pages out of
//     the scanner's sight (another filter, a larger stream) count 0, and a
//     PDF whose pages are all out of sight has PageCount 0: not known. A
//     page rewritten by an incremental update is counted at each version.
//   - The text is that of the uncompressed content streams only (a stream
//     without /Filter, and without /Subtype: not an image or a form): the
//     strings shown by Tj, TJ, ' and ", a line break for each text
//     positioning operator, the bytes read as Latin-1 (PDFDocEncoding's
//     printable range), a UTF-16BE string by its byte-order mark. A PDF
//     whose text is compressed, or drawn with embedded font encodings,
//     gives no text, and Processing.Text is empty.
func scanPDF(f *os.File, size int64) (pages int, text textBuilder, err error) {
	budget := int64(maxInflated)
	s := pdfScanner{r: reader(f, 0, size), text: textBuilder{max: MaxTextRunes}, inflate: &budget}
	if err := s.run(); err != nil {
		return 0, textBuilder{}, err
	}
	return s.pages, s.text, nil
}

type pdfScanner struct {
	r     *bufio.Reader
	pages int
	text  textBuilder

	prev     string // the previous name, for "/Type /Page"
	filtered bool   // the current object's dictionary has /Filter
	subtype  bool   // ... or /Subtype
	objStm   bool   // ... is an object stream's
	flate    bool   // ... names FlateDecode

	inflate *int64 // bytes the file's object streams may still inflate to; nil inside one
}

func (s *pdfScanner) run() error {
	for {
		c, err := s.r.ReadByte()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		switch {
		case isPDFSpace(c), c == '[', c == ']', c == '{', c == '}', c == '>', c == ')':
		case c == '%':
			err = skipLine(s.r)
		case c == '(':
			err = skipLiteral(s.r)
		case c == '<':
			err = skipHexOrDict(s.r)
		case c == '/':
			var name string
			if name, err = token(s.r, ""); err == nil {
				s.name(name)
			}
		default:
			var kw string
			if kw, err = token(s.r, string(c)); err == nil {
				err = s.keyword(kw)
			}
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

func (s *pdfScanner) name(name string) {
	switch name {
	case "Page":
		if s.prev == "Type" {
			s.pages++
		}
	case "Filter":
		s.filtered = true
	case "Subtype":
		s.subtype = true
	case "ObjStm":
		s.objStm = s.objStm || s.prev == "Type"
	case "FlateDecode":
		s.flate = true
	}
	s.prev = name
}

func (s *pdfScanner) keyword(kw string) error {
	s.prev = ""
	switch kw {
	case "obj", "endobj":
		s.endObject()
	case "stream":
		// The stream's data starts after its keyword's end of line.
		c, err := s.r.ReadByte()
		if err == nil && c == '\r' {
			if c, err = s.r.ReadByte(); err == nil && c != '\n' {
				err = s.r.UnreadByte()
			}
		}
		if err != nil {
			return err
		}
		objects := s.objStm && s.flate && s.inflate != nil && *s.inflate > 0
		content := !s.filtered && !s.subtype && !s.text.full()
		limit := 0
		switch {
		case objects:
			limit = maxObjectStream
		case content:
			limit = maxContentStream
		}
		data, err := streamData(s.r, limit)
		if err != nil {
			return err
		}
		switch {
		case data != nil && objects:
			s.objectStream(data)
		case data != nil && content:
			showText(data, &s.text)
		}
		s.endObject()
	}
	return nil
}

func (s *pdfScanner) endObject() {
	s.filtered, s.subtype, s.objStm, s.flate = false, false, false, false
}

// objectStream counts the page objects of a compressed object stream. A
// stream that does not inflate counts what inflated before the damage: the
// count is a heuristic, and the file was already accepted by checkPDF.
func (s *pdfScanner) objectStream(data []byte) {
	zr, err := zlib.NewReader(bytes.NewReader(data))
	if err != nil {
		return
	}
	defer zr.Close()
	lr := &io.LimitedReader{R: zr, N: *s.inflate}
	inner := pdfScanner{r: bufio.NewReaderSize(lr, bufferSize)}
	_ = inner.run() // an object stream holds no streams: only names are read
	s.pages += inner.pages
	*s.inflate = lr.N
}

// streamData reads up to "endstream" and returns the data before it when
// it is at most limit bytes, else nil.
func streamData(r *bufio.Reader, limit int) ([]byte, error) {
	end := newMatcher("endstream")
	keep := limit > 0
	var data []byte
	for {
		c, err := r.ReadByte()
		if err != nil {
			return nil, err
		}
		if keep {
			if len(data) < limit+len("endstream") {
				data = append(data, c)
			} else {
				keep, data = false, nil
			}
		}
		if end.feed(c) {
			if !keep {
				return nil, nil
			}
			return data[:len(data)-len("endstream")], nil
		}
	}
}

// matcher finds a fixed pattern in a byte stream (Knuth–Morris–Pratt), so
// that "endstream" is found without holding the stream.
type matcher struct {
	pat  string
	fail []int
	j    int
}

func newMatcher(pat string) *matcher {
	fail := make([]int, len(pat))
	for i, k := 1, 0; i < len(pat); i++ {
		for k > 0 && pat[i] != pat[k] {
			k = fail[k-1]
		}
		if pat[i] == pat[k] {
			k++
		}
		fail[i] = k
	}
	return &matcher{pat: pat, fail: fail}
}

// feed reports whether c completes the pattern.
func (m *matcher) feed(c byte) bool {
	for m.j > 0 && c != m.pat[m.j] {
		m.j = m.fail[m.j-1]
	}
	if c == m.pat[m.j] {
		m.j++
	}
	if m.j == len(m.pat) {
		m.j = 0
		return true
	}
	return false
}

func isPDFSpace(c byte) bool {
	return c == 0 || c == '\t' || c == '\n' || c == '\f' || c == '\r' || c == ' '
}

func isPDFDelimiter(c byte) bool {
	switch c {
	case '(', ')', '<', '>', '[', ']', '{', '}', '/', '%':
		return true
	}
	return false
}

// token reads a name or keyword's regular characters after prefix, keeping
// at most 64 of them (nothing this scanner looks for is longer).
func token(r *bufio.Reader, prefix string) (string, error) {
	b := []byte(prefix)
	for {
		c, err := r.ReadByte()
		if err == io.EOF {
			return string(b), nil
		}
		if err != nil {
			return "", err
		}
		if isPDFSpace(c) || isPDFDelimiter(c) {
			return string(b), r.UnreadByte()
		}
		if len(b) < 64 {
			b = append(b, c)
		}
	}
}

func skipLine(r *bufio.Reader) error {
	for {
		c, err := r.ReadByte()
		if err != nil || c == '\n' || c == '\r' {
			return err
		}
	}
}

// skipLiteral skips a literal string after its "(": balanced parentheses,
// a backslash escaping the next byte.
func skipLiteral(r *bufio.Reader) error {
	for depth := 1; depth > 0; {
		c, err := r.ReadByte()
		if err != nil {
			return err
		}
		switch c {
		case '\\':
			if _, err := r.ReadByte(); err != nil {
				return err
			}
		case '(':
			depth++
		case ')':
			depth--
		}
	}
	return nil
}

// skipHexOrDict skips a hex string after its "<"; "<<" opens a dictionary,
// whose content the scanner reads on.
func skipHexOrDict(r *bufio.Reader) error {
	c, err := r.ReadByte()
	if err != nil || c == '<' {
		return err
	}
	for c != '>' {
		if c, err = r.ReadByte(); err != nil {
			return err
		}
	}
	return nil
}

// showText adds the text a content stream shows to t.
func showText(data []byte, t *textBuilder) {
	var shown [][]byte // the strings since the last operator
	for i := 0; i < len(data) && !t.full(); {
		c := data[i]
		switch {
		case isPDFSpace(c), c == '[', c == ']', c == '{', c == '}', c == '>', c == ')':
			i++
		case c == '%':
			for i < len(data) && data[i] != '\n' && data[i] != '\r' {
				i++
			}
		case c == '(':
			var s []byte
			s, i = literal(data, i+1)
			shown = append(shown, s)
		case c == '<':
			for i < len(data) && data[i] != '>' {
				i++
			}
		case c == '/':
			i++
			for i < len(data) && !isPDFSpace(data[i]) && !isPDFDelimiter(data[i]) {
				i++
			}
		default:
			j := i
			for j < len(data) && !isPDFSpace(data[j]) && !isPDFDelimiter(data[j]) {
				j++
			}
			op := string(data[i:j])
			i = j
			if c == '+' || c == '-' || c == '.' || c >= '0' && c <= '9' {
				continue // a number: an operand
			}
			switch op {
			case "Tj", "TJ":
				writeShown(t, shown)
			case "'", `"`:
				t.newline()
				writeShown(t, shown)
			case "Td", "TD", "T*", "ET":
				t.newline()
			case "ID": // inline image data: binary, up to EI
				if k := bytes.Index(data[i:], []byte("EI")); k >= 0 {
					i += k + 2
				} else {
					i = len(data)
				}
			}
			shown = shown[:0]
		}
	}
}

func writeShown(t *textBuilder, shown [][]byte) {
	for _, s := range shown {
		if len(s) >= 2 && s[0] == 0xfe && s[1] == 0xff {
			u := make([]uint16, 0, len(s)/2)
			for k := 2; k+1 < len(s); k += 2 {
				u = append(u, uint16(s[k])<<8|uint16(s[k+1]))
			}
			for _, r := range utf16.Decode(u) {
				t.rune(r)
			}
			continue
		}
		for _, b := range s {
			t.rune(rune(b)) // Latin-1
		}
	}
}

// literal decodes the literal string starting after its "(" at data[i:],
// and returns it and the index after its ")".
func literal(data []byte, i int) ([]byte, int) {
	var s []byte
	for depth := 1; i < len(data); i++ {
		c := data[i]
		switch c {
		case '(':
			depth++
		case ')':
			if depth--; depth == 0 {
				return s, i + 1
			}
		case '\\':
			i++
			if i >= len(data) {
				return s, i
			}
			switch e := data[i]; e {
			case 'n':
				c = '\n'
			case 'r':
				c = '\r'
			case 't':
				c = '\t'
			case 'b':
				c = '\b'
			case 'f':
				c = '\f'
			case '\r', '\n': // a line continuation
				if e == '\r' && i+1 < len(data) && data[i+1] == '\n' {
					i++
				}
				continue
			default:
				if e >= '0' && e <= '7' {
					v := int(e - '0')
					for k := 0; k < 2 && i+1 < len(data) && data[i+1] >= '0' && data[i+1] <= '7'; k++ {
						i++
						v = v*8 + int(data[i]-'0')
					}
					c = byte(v)
				} else {
					c = e // \( \) \\ and any other: the byte itself
				}
			}
		}
		s = append(s, c)
	}
	return s, i
}
