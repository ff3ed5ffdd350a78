// Package jcs writes the RFC 8785 JSON Canonicalization Scheme form of JSON,
// the one canonical form of the project: the draft digest, the payment and
// Idempotency-Key fingerprints and every other hash of JSON are taken over it.
package jcs

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// Errors of [Canonicalize].
var (
	// ErrInvalidJSON means the input is not JSON text (RFC 8259).
	ErrInvalidJSON = errors.New("invalid JSON")
	// ErrNotIJSON means the input is JSON but outside what RFC 8785
	// canonicalizes: a duplicate member name, a lone surrogate escape, bytes
	// that are not UTF-8, a number beyond the IEEE 754 double range, or
	// nesting deeper than maxJSONDepth.
	ErrNotIJSON = errors.New("JSON outside the I-JSON profile")
)

// maxJSONDepth bounds nesting so hostile input cannot exhaust the stack.
const maxJSONDepth = 1000

// Canonicalize returns the RFC 8785 JSON Canonicalization Scheme form of v:
// no insignificant whitespace, object members sorted by the UTF-16 code
// units of their names, strings with only the mandatory escapes (\" \\ \b
// \f \n \r \t and \u00xx for the other control characters, lowercase hex),
// and numbers as ECMAScript's Number.prototype.toString writes the IEEE 754
// double they denote.
//
// A json.RawMessage is canonicalized as the JSON text it holds. Anything
// else is first encoded with encoding/json; note that encoding/json
// replaces invalid UTF-8 in Go strings with U+FFFD instead of failing, so
// callers that hash values validate their strings first.
//
// The error wraps ErrInvalidJSON or ErrNotIJSON, or is the encoding error.
func Canonicalize(v any) ([]byte, error) {
	raw, ok := v.(json.RawMessage)
	if !ok {
		var err error
		if raw, err = json.Marshal(v); err != nil {
			return nil, fmt.Errorf("canonical JSON: %w", err)
		}
	}
	c := canonicalizer{data: raw, out: make([]byte, 0, len(raw))}
	if err := c.document(); err != nil {
		return nil, fmt.Errorf("canonical JSON: %w", err)
	}
	return c.out, nil
}

// canonicalizer reads JSON text strictly (RFC 8259, and the I-JSON
// restrictions RFC 8785 relies on; encoding/json cannot be used for this,
// it takes duplicate names, lone surrogates and invalid UTF-8 silently) and
// writes its canonical form as it goes, in one pass and without building
// the value. Only an object's members need reordering: each member is
// written where it comes, and when the object closes the members are put
// in order.
type canonicalizer struct {
	data  []byte
	pos   int
	depth int
	out   []byte
	// members holds the members of every object being read, innermost
	// last; an object's own start where it began.
	members []member
	// scratch is where an object's members wait while they are written
	// back in order. Objects close one at a time, so one buffer serves all.
	scratch []byte
}

// member is one member of an object, written canonically to out[start:end]
// ("name":value), and its name, by which members sort.
type member struct {
	name       []byte // decoded: valid UTF-8
	start, end int
}

func (c *canonicalizer) document() error {
	c.space()
	if err := c.value(); err != nil {
		return err
	}
	c.space()
	if c.pos != len(c.data) {
		return c.syntax("data after the top-level value")
	}
	return nil
}

func (c *canonicalizer) syntax(what string) error {
	return fmt.Errorf("%w: %s at offset %d", ErrInvalidJSON, what, c.pos)
}

func (c *canonicalizer) notIJSON(what string) error {
	return fmt.Errorf("%w: %s at offset %d", ErrNotIJSON, what, c.pos)
}

func (c *canonicalizer) space() {
	for c.pos < len(c.data) {
		switch c.data[c.pos] {
		case ' ', '\t', '\n', '\r':
			c.pos++
		default:
			return
		}
	}
}

func (c *canonicalizer) value() error {
	if c.pos >= len(c.data) {
		return c.syntax("unexpected end of input")
	}
	switch b := c.data[c.pos]; {
	case b == '{':
		return c.object()
	case b == '[':
		return c.array()
	case b == '"':
		return c.stringValue()
	case b == 't':
		return c.literal("true")
	case b == 'f':
		return c.literal("false")
	case b == 'n':
		return c.literal("null")
	case b == '-' || ('0' <= b && b <= '9'):
		return c.number()
	default:
		return c.syntax("unexpected character")
	}
}

func (c *canonicalizer) literal(word string) error {
	if !bytes.HasPrefix(c.data[c.pos:], []byte(word)) {
		return c.syntax("invalid literal")
	}
	c.pos += len(word)
	c.out = append(c.out, word...)
	return nil
}

func (c *canonicalizer) enter() error {
	c.depth++
	if c.depth > maxJSONDepth {
		return c.notIJSON(fmt.Sprintf("nesting deeper than %d", maxJSONDepth))
	}
	return nil
}

func (c *canonicalizer) object() error {
	if err := c.enter(); err != nil {
		return err
	}
	defer func() { c.depth-- }()
	c.pos++ // {
	open, first := len(c.out), len(c.members)
	defer func() { c.members = c.members[:first] }()
	var seen map[string]bool // names, once the object is too large to scan
	c.space()
	if c.pos < len(c.data) && c.data[c.pos] == '}' {
		c.pos++
		c.out = append(c.out, "{}"...)
		return nil
	}
	for {
		c.space()
		if c.pos >= len(c.data) || c.data[c.pos] != '"' {
			return c.syntax("expected a member name")
		}
		at := c.pos
		name, err := c.name()
		if err != nil {
			return err
		}
		if duplicate(c.members[first:], &seen, name) {
			c.pos = at
			return c.notIJSON(fmt.Sprintf("duplicate member name %q", name))
		}
		c.space()
		if c.pos >= len(c.data) || c.data[c.pos] != ':' {
			return c.syntax("expected ':'")
		}
		c.pos++
		c.space()
		start := len(c.out)
		c.out = appendString(c.out, name)
		c.out = append(c.out, ':')
		if err := c.value(); err != nil {
			return err
		}
		c.members = append(c.members, member{name: name, start: start, end: len(c.out)})
		c.space()
		if c.pos >= len(c.data) {
			return c.syntax("unexpected end of input in an object")
		}
		switch c.data[c.pos] {
		case ',':
			c.pos++
		case '}':
			c.pos++
			c.order(open, c.members[first:])
			return nil
		default:
			return c.syntax("expected ',' or '}'")
		}
	}
}

// order rewrites the members of the object at out[open:], written as they
// came, as the object's canonical text: members sorted by name.
func (c *canonicalizer) order(open int, members []member) {
	slices.SortFunc(members, func(a, b member) int { return compareUTF16(a.name, b.name) })
	c.scratch = append(c.scratch[:0], c.out[open:]...)
	c.out = append(c.out[:open], '{')
	for i, m := range members {
		if i > 0 {
			c.out = append(c.out, ',')
		}
		c.out = append(c.out, c.scratch[m.start-open:m.end-open]...)
	}
	c.out = append(c.out, '}')
}

// scanLimit is the member count up to which duplicates are found by
// scanning the members read so far; larger objects keep a set of names.
const scanLimit = 16

// duplicate reports whether name is among the members read so far, and
// records it in *seen once the object outgrows scanning.
func duplicate(members []member, seen *map[string]bool, name []byte) bool {
	if len(members) < scanLimit {
		for _, m := range members {
			if bytes.Equal(m.name, name) {
				return true
			}
		}
		return false
	}
	if *seen == nil {
		*seen = make(map[string]bool, 2*len(members))
		for _, m := range members {
			(*seen)[string(m.name)] = true
		}
	}
	if (*seen)[string(name)] {
		return true
	}
	(*seen)[string(name)] = true
	return false
}

// compareUTF16 orders two valid UTF-8 names by their UTF-16 code units, as
// RFC 8785 sorts members. UTF-8 bytes order text by code point, and UTF-16
// units do too except where a supplementary character (a surrogate pair,
// from 0xD800) meets one of U+E000 to U+FFFF. So the names are compared
// byte by byte up to their first difference, and the two characters that
// differ there as UTF-16.
func compareUTF16(a, b []byte) int {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	if i == len(a) || i == len(b) {
		return cmp.Compare(len(a), len(b)) // one is a prefix of the other
	}
	for i > 0 && !utf8.RuneStart(a[i]) {
		i-- // back to the first byte of the character that differs, in both
	}
	ra, _ := utf8.DecodeRune(a[i:])
	rb, _ := utf8.DecodeRune(b[i:])
	if ua, ub := firstUnit(ra), firstUnit(rb); ua != ub {
		return cmp.Compare(ua, ub)
	}
	return cmp.Compare(ra, rb) // two surrogate pairs with the same high half
}

// firstUnit is the first UTF-16 code unit of r.
func firstUnit(r rune) rune {
	if r < 0x10000 {
		return r
	}
	high, _ := utf16.EncodeRune(r)
	return high
}

func (c *canonicalizer) array() error {
	if err := c.enter(); err != nil {
		return err
	}
	defer func() { c.depth-- }()
	c.pos++ // [
	c.out = append(c.out, '[')
	c.space()
	if c.pos < len(c.data) && c.data[c.pos] == ']' {
		c.pos++
		c.out = append(c.out, ']')
		return nil
	}
	for {
		c.space()
		if err := c.value(); err != nil {
			return err
		}
		c.space()
		if c.pos >= len(c.data) {
			return c.syntax("unexpected end of input in an array")
		}
		switch c.data[c.pos] {
		case ',':
			c.pos++
			c.out = append(c.out, ',')
		case ']':
			c.pos++
			c.out = append(c.out, ']')
			return nil
		default:
			return c.syntax("expected ',' or ']'")
		}
	}
}

// stringValue reads a string token and writes it canonically.
func (c *canonicalizer) stringValue() error {
	c.out = append(c.out, '"')
	start := len(c.out)
	decoded, err := c.decodeString(c.out)
	if err != nil {
		return err
	}
	// The value is decoded in place, after the opening quote; most values
	// need no escape and are canonical as they are.
	if value := decoded[start:]; needsEscape(value) {
		c.out = appendString(decoded[:start-1], bytes.Clone(value))
		return nil
	}
	c.out = append(decoded, '"')
	return nil
}

// name reads a member name and returns its decoded value. A name without
// escapes is its own bytes in the input; only one with escapes is copied.
func (c *canonicalizer) name() ([]byte, error) {
	for i := c.pos + 1; i < len(c.data); i++ {
		b := c.data[i]
		if b == '"' {
			name := c.data[c.pos+1 : i]
			c.pos = i + 1
			return name, nil
		}
		if b == '\\' || b < 0x20 || b >= utf8.RuneSelf {
			break
		}
	}
	return c.decodeString(nil)
}

// decodeString reads the string token at pos and appends its value, which
// is valid UTF-8, to dst.
func (c *canonicalizer) decodeString(dst []byte) ([]byte, error) {
	c.pos++ // opening quote
	for {
		if c.pos >= len(c.data) {
			return nil, c.syntax("unterminated string")
		}
		b := c.data[c.pos]
		switch {
		case b == '"':
			c.pos++
			return dst, nil
		case b == '\\':
			var err error
			if dst, err = c.escape(dst); err != nil {
				return nil, err
			}
		case b < 0x20:
			return nil, c.syntax("control character in a string")
		case b < utf8.RuneSelf:
			dst = append(dst, b)
			c.pos++
		default:
			r, size := utf8.DecodeRune(c.data[c.pos:])
			if r == utf8.RuneError && size == 1 {
				return nil, c.notIJSON("invalid UTF-8")
			}
			dst = append(dst, c.data[c.pos:c.pos+size]...)
			c.pos += size
		}
	}
}

func (c *canonicalizer) escape(dst []byte) ([]byte, error) {
	if c.pos+1 >= len(c.data) {
		return nil, c.syntax("unterminated escape")
	}
	switch b := c.data[c.pos+1]; b {
	case '"', '\\', '/':
		dst = append(dst, b)
	case 'b':
		dst = append(dst, '\b')
	case 'f':
		dst = append(dst, '\f')
	case 'n':
		dst = append(dst, '\n')
	case 'r':
		dst = append(dst, '\r')
	case 't':
		dst = append(dst, '\t')
	case 'u':
		return c.unicodeEscape(dst)
	default:
		return nil, c.syntax("invalid escape")
	}
	c.pos += 2
	return dst, nil
}

// unicodeEscape reads a \u escape (four hex digits), and the low half when
// the first is a high surrogate.
func (c *canonicalizer) unicodeEscape(dst []byte) ([]byte, error) {
	r, err := c.hex4(c.pos + 2)
	if err != nil {
		return nil, err
	}
	c.pos += 6
	switch {
	case utf16.IsSurrogate(r) && r < 0xdc00: // high surrogate: a low one must follow
		if c.pos+1 < len(c.data) && c.data[c.pos] == '\\' && c.data[c.pos+1] == 'u' {
			low, err := c.hex4(c.pos + 2)
			if err != nil {
				return nil, err
			}
			if low >= 0xdc00 && low <= 0xdfff {
				c.pos += 6
				return utf8.AppendRune(dst, utf16.DecodeRune(r, low)), nil
			}
		}
		return nil, c.notIJSON("lone surrogate escape")
	case utf16.IsSurrogate(r):
		return nil, c.notIJSON("lone surrogate escape")
	default:
		return utf8.AppendRune(dst, r), nil
	}
}

func (c *canonicalizer) hex4(at int) (rune, error) {
	if at+4 > len(c.data) {
		return 0, c.syntax("short \\u escape")
	}
	var r rune
	for _, b := range c.data[at : at+4] {
		var d byte
		switch {
		case '0' <= b && b <= '9':
			d = b - '0'
		case 'a' <= b && b <= 'f':
			d = b - 'a' + 10
		case 'A' <= b && b <= 'F':
			d = b - 'A' + 10
		default:
			return 0, c.syntax("invalid \\u escape")
		}
		r = r<<4 | rune(d)
	}
	return r, nil
}

func (c *canonicalizer) number() error {
	start := c.pos
	digits := func() int {
		n := 0
		for c.pos < len(c.data) && '0' <= c.data[c.pos] && c.data[c.pos] <= '9' {
			c.pos++
			n++
		}
		return n
	}
	if c.data[c.pos] == '-' {
		c.pos++
	}
	switch {
	case c.pos < len(c.data) && c.data[c.pos] == '0':
		c.pos++
	case digits() == 0:
		return c.syntax("invalid number")
	}
	if c.pos < len(c.data) && c.data[c.pos] == '.' {
		c.pos++
		if digits() == 0 {
			return c.syntax("invalid number fraction")
		}
	}
	if c.pos < len(c.data) && (c.data[c.pos] == 'e' || c.data[c.pos] == 'E') {
		c.pos++
		if c.pos < len(c.data) && (c.data[c.pos] == '+' || c.data[c.pos] == '-') {
			c.pos++
		}
		if digits() == 0 {
			return c.syntax("invalid number exponent")
		}
	}
	f, err := strconv.ParseFloat(string(c.data[start:c.pos]), 64)
	if err != nil || math.IsInf(f, 0) {
		c.pos = start
		return c.notIJSON("number beyond the IEEE 754 double range")
	}
	c.out = appendES6(c.out, f)
	return nil
}

// needsEscape reports whether a decoded string has a byte RFC 8785
// escapes: a quote, a backslash or a control character.
func needsEscape(s []byte) bool {
	for _, b := range s {
		if b < 0x20 || b == '"' || b == '\\' {
			return true
		}
	}
	return false
}

// appendString appends s (valid UTF-8) as RFC 8785 section 3.2.2.2 says:
// the two mandatory escapes, the short forms of five control characters,
// \u00xx with lowercase hex for the others, everything else as UTF-8.
func appendString(dst, s []byte) []byte {
	const hexDigits = "0123456789abcdef"
	dst = append(dst, '"')
	plain := 0 // start of the bytes not yet written, which need no escape
	for i, b := range s {
		if b >= 0x20 && b != '"' && b != '\\' {
			continue
		}
		dst = append(dst, s[plain:i]...)
		plain = i + 1
		switch b {
		case '"':
			dst = append(dst, `\"`...)
		case '\\':
			dst = append(dst, `\\`...)
		case '\b':
			dst = append(dst, `\b`...)
		case '\f':
			dst = append(dst, `\f`...)
		case '\n':
			dst = append(dst, `\n`...)
		case '\r':
			dst = append(dst, `\r`...)
		case '\t':
			dst = append(dst, `\t`...)
		default:
			dst = append(dst, '\\', 'u', '0', '0', hexDigits[b>>4], hexDigits[b&0xf])
		}
	}
	dst = append(dst, s[plain:]...)
	return append(dst, '"')
}

// appendES6 appends a finite double as ECMAScript's Number::toString writes
// it (ECMA-262, Number::toString with radix 10): the shortest digits that
// read back as the same double, in plain notation when the decimal
// exponent n satisfies -6 < n <= 21 and in exponential notation otherwise.
// Go's shortest formatting picks the same digits, the one closest to the
// value among the shortest.
func appendES6(dst []byte, f float64) []byte {
	if f == 0 {
		return append(dst, '0') // also -0
	}
	if f == math.Trunc(f) && math.Abs(f) < 1<<53 {
		// Every integer below 2^53 is a double, so no shorter digits
		// read back as the same one: its digits are the integer's.
		return strconv.AppendInt(dst, int64(f), 10)
	}
	if f < 0 {
		dst, f = append(dst, '-'), -f
	}
	var buf [32]byte
	formatted := strconv.AppendFloat(buf[:0], f, 'e', -1, 64)
	mark := bytes.IndexByte(formatted, 'e')
	mantissa, exp := formatted[:mark], formatted[mark+1:]
	var digitBuf [24]byte
	digits := append(digitBuf[:0], mantissa[0])
	if len(mantissa) > 2 {
		digits = append(digits, mantissa[2:]...) // after the point
	}
	e, _ := strconv.Atoi(string(exp))
	k, n := len(digits), e+1
	switch {
	case k <= n && n <= 21:
		dst = append(dst, digits...)
		return append(dst, zeros[:n-k]...)
	case 0 < n && n <= 21:
		dst = append(dst, digits[:n]...)
		dst = append(dst, '.')
		return append(dst, digits[n:]...)
	case -6 < n && n <= 0:
		dst = append(dst, "0."...)
		dst = append(dst, zeros[:-n]...)
		return append(dst, digits...)
	}
	dst = append(dst, digits[0])
	if k > 1 {
		dst = append(dst, '.')
		dst = append(dst, digits[1:]...)
	}
	dst = append(dst, 'e')
	if n-1 >= 0 {
		dst = append(dst, '+')
	}
	return strconv.AppendInt(dst, int64(n-1), 10)
}

// zeros pads plain notation: at most 20 after the digits (n <= 21, k >= 1)
// and 5 after the point (n > -6).
const zeros = "00000000000000000000"
