package exhibitfile

import (
	"fmt"
	"io"
	"os"
	"unicode/utf8"
)

const utf8BOM = "\xef\xbb\xbf"

// byteChecker is a format's check fed the file's bytes in order (the BOM
// left out), then told the file ended.
type byteChecker interface {
	feed(c byte, off int64) *Refusal
	end() *Refusal
}

// checkText reads a text file once, front to back: it must be UTF-8 (a
// byte-order mark allowed at the start) and hold no binary control bytes
// (NUL, and the C0 controls other than tab, line feed, form feed, carriage
// return and escape: the bytes http.DetectContentType takes for binary),
// anywhere, not only in the sniffed head. A CSV must then parse as one
// (csvCheck), a JSON file as one JSON value (jsonCheck). Each is a
// streaming state machine over the bytes, so memory stays bounded however
// long a line or a string is.
func checkText(f *os.File, size int64, t MediaType) (*Refusal, error) {
	var format byteChecker
	switch t {
	case CSV:
		format = &csvCheck{}
	case JSON:
		format = &jsonCheck{}
	}
	r := io.NewSectionReader(f, 0, size)
	buf := make([]byte, bufferSize+utf8.UTFMax)
	var carry int // bytes of an incomplete rune kept from the last read
	var off int64 // the file offset of buf[0]
	for {
		n, err := r.Read(buf[carry : carry+bufferSize])
		n += carry
		if err != nil && err != io.EOF {
			return nil, fmt.Errorf("reading spool file: %w", err)
		}
		atEnd := err == io.EOF
		chunk := buf[:n]
		// Hold back a rune cut by the end of the read, unless the file ends.
		whole := n
		if !atEnd {
			for k := 1; k < utf8.UTFMax && k <= n; k++ {
				if utf8.RuneStart(chunk[n-k]) {
					if !utf8.FullRune(chunk[n-k:]) {
						whole = n - k
					}
					break
				}
			}
		}
		if !utf8.Valid(chunk[:whole]) {
			return refuse(CodeContentInvalid, "the %s is not valid UTF-8 (near byte %d)", t.label(), off+int64(invalidAt(chunk[:whole]))), nil
		}
		start := 0
		if off == 0 && len(chunk) >= 3 && string(chunk[:3]) == utf8BOM {
			start = 3
		}
		for i := start; i < whole; i++ {
			c := chunk[i]
			if isBinaryControl(c) {
				return refuse(CodeContentInvalid, "the %s holds the binary byte 0x%02X at byte %d", t.label(), c, off+int64(i)), nil
			}
			if format != nil {
				if ref := format.feed(c, off+int64(i)); ref != nil {
					return ref, nil
				}
			}
		}
		carry = copy(buf, chunk[whole:])
		off += int64(whole)
		if atEnd {
			break
		}
	}
	if format != nil {
		return format.end(), nil
	}
	return nil, nil
}

// invalidAt is the index of the first byte of b that is not valid UTF-8.
func invalidAt(b []byte) int {
	for i := 0; i < len(b); {
		r, n := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && n <= 1 {
			return i
		}
		i += n
	}
	return len(b)
}

// isBinaryControl reports the bytes the WHATWG sniffing standard (and so
// http.DetectContentType) takes as binary data.
func isBinaryControl(c byte) bool {
	return c <= 0x08 || c == 0x0b || c >= 0x0e && c <= 0x1a || c >= 0x1c && c <= 0x1f
}

// csvCheck holds a CSV to RFC 4180 as encoding/csv reads it without
// LazyQuotes: comma-separated fields, a quoted field's quotes doubled, no
// quote inside an unquoted field, every record with the first record's
// number of fields, empty lines skipped, at least one record.
type csvCheck struct {
	state   int
	line    int // 1-based line of the current byte
	fields  int // fields ended in the current record
	want    int // fields per record, from the first; 0 before it
	started bool
	cr      bool // a CR is held back: the next byte tells what it is
}

const (
	csvFieldStart = iota
	csvUnquoted
	csvQuoted
	csvQuoteInQuoted // a quote inside a quoted field: the end, or the first of a doubled pair
)

func (c *csvCheck) feed(b byte, off int64) *Refusal {
	// A CR is content, except right before a LF (a CRLF line end) and as
	// the file's last byte, as encoding/csv reads it.
	if c.cr {
		c.cr = false
		if b != '\n' {
			if ref := c.content('\r'); ref != nil {
				return ref
			}
		}
	}
	if b == '\r' {
		c.cr = true
		return nil
	}
	return c.content(b)
}

func (c *csvCheck) content(b byte) *Refusal {
	if c.line == 0 {
		c.line = 1
	}
	switch c.state {
	case csvFieldStart, csvUnquoted:
		switch {
		case b == '\n':
			if c.started {
				if ref := c.endRecord(); ref != nil {
					return ref
				}
			}
			c.line++
			return nil
		case b == ',':
			c.fields++
			c.state = csvFieldStart
		case b == '"' && c.state == csvFieldStart:
			c.state = csvQuoted
		case b == '"':
			return refuse(CodeContentInvalid, "the CSV has a bare quote in an unquoted field on line %d", c.line)
		default:
			c.state = csvUnquoted
		}
	case csvQuoted:
		if b == '"' {
			c.state = csvQuoteInQuoted
		} else if b == '\n' {
			c.line++
		}
	case csvQuoteInQuoted:
		switch b {
		case '"':
			c.state = csvQuoted
		case ',':
			c.fields++
			c.state = csvFieldStart
		case '\n':
			if ref := c.endRecord(); ref != nil {
				return ref
			}
			c.line++
			return nil
		default:
			return refuse(CodeContentInvalid, "the CSV has a stray quote in a quoted field on line %d", c.line)
		}
	}
	c.started = true
	return nil
}

func (c *csvCheck) endRecord() *Refusal {
	c.fields++
	switch {
	case c.want == 0:
		c.want = c.fields
	case c.fields != c.want:
		return refuse(CodeContentInvalid, "the CSV's line %d has %d fields, its first record %d", c.line, c.fields, c.want)
	}
	c.fields, c.state, c.started = 0, csvFieldStart, false
	return nil
}

func (c *csvCheck) end() *Refusal {
	if c.state == csvQuoted {
		return refuse(CodeContentInvalid, "the CSV ends inside a quoted field")
	}
	if c.started {
		if ref := c.endRecord(); ref != nil {
			return ref
		}
	}
	if c.want == 0 {
		return refuse(CodeContentInvalid, "the CSV has no records")
	}
	return nil
}

// maxJSONDepth is the deepest nesting accepted, as encoding/json's.
const maxJSONDepth = 10000

// jsonCheck holds a file to RFC 8259: exactly one JSON value, white space
// around it. It accepts what json.Valid accepts (its tests compare the
// two), one byte at a time, holding only the stack of open containers.
type jsonCheck struct {
	state int
	stack []byte // '{' or '[' per open container
	key   bool   // the string being read is an object key
	lit   string // the literal being read (true, false, null)
	pos   int    // bytes of lit or hex digits matched so far
}

const (
	jsonValue      = iota // a value is expected
	jsonValueOrEnd        // after '[': a value or ']'
	jsonKeyOrEnd          // after '{': a key or '}'
	jsonKey               // after ',' in an object: a key
	jsonColon             // after a key
	jsonAfter             // after a value
	jsonString            // inside a string
	jsonEscape            // after a backslash
	jsonHex               // inside \uXXXX
	jsonLiteral           // inside true, false or null
	jsonMinus             // after '-'
	jsonZero              // after a leading 0
	jsonInt               // in the integer digits
	jsonDot               // after '.'
	jsonFrac              // in the fraction digits
	jsonExp               // after 'e' or 'E'
	jsonExpSign           // after the exponent's sign
	jsonExpDigits         // in the exponent digits
)

func isJSONSpace(b byte) bool { return b == ' ' || b == '\t' || b == '\n' || b == '\r' }

func (j *jsonCheck) bad(b byte, off int64) *Refusal {
	return refuse(CodeContentInvalid, "the JSON is not valid: unexpected %q at byte %d", b, off)
}

func (j *jsonCheck) feed(b byte, off int64) *Refusal {
	for {
		switch j.state {
		case jsonValue, jsonValueOrEnd:
			switch {
			case isJSONSpace(b):
			case b == ']' && j.state == jsonValueOrEnd:
				j.pop()
			case b == '{' || b == '[':
				if len(j.stack) == maxJSONDepth {
					return refuse(CodeContentInvalid, "the JSON nests deeper than %d", maxJSONDepth)
				}
				j.stack = append(j.stack, b)
				j.state = jsonKeyOrEnd
				if b == '[' {
					j.state = jsonValueOrEnd
				}
			case b == '"':
				j.state, j.key = jsonString, false
			case b == '-':
				j.state = jsonMinus
			case b == '0':
				j.state = jsonZero
			case b >= '1' && b <= '9':
				j.state = jsonInt
			case b == 't':
				j.state, j.lit, j.pos = jsonLiteral, "true", 1
			case b == 'f':
				j.state, j.lit, j.pos = jsonLiteral, "false", 1
			case b == 'n':
				j.state, j.lit, j.pos = jsonLiteral, "null", 1
			default:
				return j.bad(b, off)
			}
		case jsonKeyOrEnd, jsonKey:
			switch {
			case isJSONSpace(b):
			case b == '}' && j.state == jsonKeyOrEnd:
				j.pop()
			case b == '"':
				j.state, j.key = jsonString, true
			default:
				return j.bad(b, off)
			}
		case jsonColon:
			switch {
			case isJSONSpace(b):
			case b == ':':
				j.state = jsonValue
			default:
				return j.bad(b, off)
			}
		case jsonAfter:
			switch {
			case isJSONSpace(b):
			case len(j.stack) == 0:
				return refuse(CodeContentInvalid, "the JSON has more after its value, at byte %d", off)
			case b == ',':
				j.state = jsonValue
				if j.stack[len(j.stack)-1] == '{' {
					j.state = jsonKey
				}
			case b == '}' && j.stack[len(j.stack)-1] == '{', b == ']' && j.stack[len(j.stack)-1] == '[':
				j.pop()
			default:
				return j.bad(b, off)
			}
		case jsonString:
			switch {
			case b == '"':
				j.state = jsonAfter
				if j.key {
					j.state = jsonColon
				}
			case b == '\\':
				j.state = jsonEscape
			case b < 0x20:
				return j.bad(b, off)
			}
		case jsonEscape:
			switch b {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				j.state = jsonString
			case 'u':
				j.state, j.pos = jsonHex, 0
			default:
				return j.bad(b, off)
			}
		case jsonHex:
			if !(b >= '0' && b <= '9' || b >= 'a' && b <= 'f' || b >= 'A' && b <= 'F') {
				return j.bad(b, off)
			}
			if j.pos++; j.pos == 4 {
				j.state = jsonString
			}
		case jsonLiteral:
			if b != j.lit[j.pos] {
				return j.bad(b, off)
			}
			if j.pos++; j.pos == len(j.lit) {
				j.state = jsonAfter
			}
		case jsonMinus:
			switch {
			case b == '0':
				j.state = jsonZero
			case b >= '1' && b <= '9':
				j.state = jsonInt
			default:
				return j.bad(b, off)
			}
		case jsonZero, jsonInt, jsonFrac, jsonExpDigits:
			digit := b >= '0' && b <= '9'
			switch {
			case digit && j.state != jsonZero:
			case b == '.' && (j.state == jsonZero || j.state == jsonInt):
				j.state = jsonDot
			case (b == 'e' || b == 'E') && j.state != jsonExpDigits:
				j.state = jsonExp
			case digit: // a digit after a leading zero
				return j.bad(b, off)
			default: // the number ended: b belongs to what follows
				j.state = jsonAfter
				continue
			}
		case jsonDot:
			if b < '0' || b > '9' {
				return j.bad(b, off)
			}
			j.state = jsonFrac
		case jsonExp:
			switch {
			case b == '+' || b == '-':
				j.state = jsonExpSign
			case b >= '0' && b <= '9':
				j.state = jsonExpDigits
			default:
				return j.bad(b, off)
			}
		case jsonExpSign:
			if b < '0' || b > '9' {
				return j.bad(b, off)
			}
			j.state = jsonExpDigits
		}
		return nil
	}
}

func (j *jsonCheck) pop() {
	j.stack = j.stack[:len(j.stack)-1]
	j.state = jsonAfter
}

func (j *jsonCheck) end() *Refusal {
	switch j.state {
	case jsonZero, jsonInt, jsonFrac, jsonExpDigits:
		j.state = jsonAfter
	}
	if j.state == jsonValue && len(j.stack) == 0 {
		return refuse(CodeContentInvalid, "the JSON holds no value")
	}
	if j.state != jsonAfter || len(j.stack) > 0 {
		return refuse(CodeContentInvalid, "the JSON ends before its value is complete")
	}
	return nil
}
