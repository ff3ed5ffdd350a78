package jcs

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
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
// callers that hash values validate their strings first, as [Prepare] does.
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
	p := jsonParser{data: raw}
	val, err := p.document()
	if err != nil {
		return nil, fmt.Errorf("canonical JSON: %w", err)
	}
	var buf bytes.Buffer
	buf.Grow(len(raw))
	writeCanonical(&buf, val)
	return buf.Bytes(), nil
}

type jsonKind uint8

const (
	jsonNull jsonKind = iota
	jsonFalse
	jsonTrue
	jsonNumber
	jsonString
	jsonArray
	jsonObject
)

type jsonValue struct {
	kind    jsonKind
	number  float64
	str     string
	items   []jsonValue
	members []jsonMember
}

type jsonMember struct {
	name  string
	units []uint16 // name in UTF-16, the sort key
	value jsonValue
}

// jsonParser is a strict RFC 8259 parser that also enforces the I-JSON
// restrictions RFC 8785 relies on. encoding/json cannot be used for this:
// it takes duplicate names, lone surrogates and invalid UTF-8 silently.
type jsonParser struct {
	data  []byte
	pos   int
	depth int
}

func (p *jsonParser) document() (jsonValue, error) {
	p.space()
	v, err := p.value()
	if err != nil {
		return jsonValue{}, err
	}
	p.space()
	if p.pos != len(p.data) {
		return jsonValue{}, p.syntax("data after the top-level value")
	}
	return v, nil
}

func (p *jsonParser) syntax(what string) error {
	return fmt.Errorf("%w: %s at offset %d", ErrInvalidJSON, what, p.pos)
}

func (p *jsonParser) notIJSON(what string) error {
	return fmt.Errorf("%w: %s at offset %d", ErrNotIJSON, what, p.pos)
}

func (p *jsonParser) space() {
	for p.pos < len(p.data) {
		switch p.data[p.pos] {
		case ' ', '\t', '\n', '\r':
			p.pos++
		default:
			return
		}
	}
}

func (p *jsonParser) literal(word string, kind jsonKind) (jsonValue, error) {
	if !bytes.HasPrefix(p.data[p.pos:], []byte(word)) {
		return jsonValue{}, p.syntax("invalid literal")
	}
	p.pos += len(word)
	return jsonValue{kind: kind}, nil
}

func (p *jsonParser) value() (jsonValue, error) {
	if p.pos >= len(p.data) {
		return jsonValue{}, p.syntax("unexpected end of input")
	}
	switch c := p.data[p.pos]; {
	case c == '{':
		return p.object()
	case c == '[':
		return p.array()
	case c == '"':
		s, err := p.string()
		return jsonValue{kind: jsonString, str: s}, err
	case c == 't':
		return p.literal("true", jsonTrue)
	case c == 'f':
		return p.literal("false", jsonFalse)
	case c == 'n':
		return p.literal("null", jsonNull)
	case c == '-' || ('0' <= c && c <= '9'):
		return p.number()
	default:
		return jsonValue{}, p.syntax("unexpected character")
	}
}

func (p *jsonParser) enter() error {
	p.depth++
	if p.depth > maxJSONDepth {
		return p.notIJSON(fmt.Sprintf("nesting deeper than %d", maxJSONDepth))
	}
	return nil
}

func (p *jsonParser) object() (jsonValue, error) {
	if err := p.enter(); err != nil {
		return jsonValue{}, err
	}
	defer func() { p.depth-- }()
	p.pos++ // {
	v := jsonValue{kind: jsonObject}
	seen := map[string]bool{}
	p.space()
	if p.pos < len(p.data) && p.data[p.pos] == '}' {
		p.pos++
		return v, nil
	}
	for {
		p.space()
		if p.pos >= len(p.data) || p.data[p.pos] != '"' {
			return jsonValue{}, p.syntax("expected a member name")
		}
		at := p.pos
		name, err := p.string()
		if err != nil {
			return jsonValue{}, err
		}
		if seen[name] {
			p.pos = at
			return jsonValue{}, p.notIJSON(fmt.Sprintf("duplicate member name %q", name))
		}
		seen[name] = true
		p.space()
		if p.pos >= len(p.data) || p.data[p.pos] != ':' {
			return jsonValue{}, p.syntax("expected ':'")
		}
		p.pos++
		p.space()
		member, err := p.value()
		if err != nil {
			return jsonValue{}, err
		}
		v.members = append(v.members, jsonMember{name: name, units: utf16.Encode([]rune(name)), value: member})
		p.space()
		if p.pos >= len(p.data) {
			return jsonValue{}, p.syntax("unexpected end of input in an object")
		}
		switch p.data[p.pos] {
		case ',':
			p.pos++
		case '}':
			p.pos++
			slices.SortFunc(v.members, func(a, b jsonMember) int { return slices.Compare(a.units, b.units) })
			return v, nil
		default:
			return jsonValue{}, p.syntax("expected ',' or '}'")
		}
	}
}

func (p *jsonParser) array() (jsonValue, error) {
	if err := p.enter(); err != nil {
		return jsonValue{}, err
	}
	defer func() { p.depth-- }()
	p.pos++ // [
	v := jsonValue{kind: jsonArray}
	p.space()
	if p.pos < len(p.data) && p.data[p.pos] == ']' {
		p.pos++
		return v, nil
	}
	for {
		p.space()
		item, err := p.value()
		if err != nil {
			return jsonValue{}, err
		}
		v.items = append(v.items, item)
		p.space()
		if p.pos >= len(p.data) {
			return jsonValue{}, p.syntax("unexpected end of input in an array")
		}
		switch p.data[p.pos] {
		case ',':
			p.pos++
		case ']':
			p.pos++
			return v, nil
		default:
			return jsonValue{}, p.syntax("expected ',' or ']'")
		}
	}
}

// string reads a string token and returns its value, which is valid UTF-8.
func (p *jsonParser) string() (string, error) {
	p.pos++ // opening quote
	var b strings.Builder
	for {
		if p.pos >= len(p.data) {
			return "", p.syntax("unterminated string")
		}
		c := p.data[p.pos]
		switch {
		case c == '"':
			p.pos++
			return b.String(), nil
		case c == '\\':
			if err := p.escape(&b); err != nil {
				return "", err
			}
		case c < 0x20:
			return "", p.syntax("control character in a string")
		case c < utf8.RuneSelf:
			b.WriteByte(c)
			p.pos++
		default:
			r, size := utf8.DecodeRune(p.data[p.pos:])
			if r == utf8.RuneError && size == 1 {
				return "", p.notIJSON("invalid UTF-8")
			}
			b.Write(p.data[p.pos : p.pos+size])
			p.pos += size
		}
	}
}

func (p *jsonParser) escape(b *strings.Builder) error {
	if p.pos+1 >= len(p.data) {
		return p.syntax("unterminated escape")
	}
	switch c := p.data[p.pos+1]; c {
	case '"', '\\', '/':
		b.WriteByte(c)
	case 'b':
		b.WriteByte('\b')
	case 'f':
		b.WriteByte('\f')
	case 'n':
		b.WriteByte('\n')
	case 'r':
		b.WriteByte('\r')
	case 't':
		b.WriteByte('\t')
	case 'u':
		return p.unicodeEscape(b)
	default:
		return p.syntax("invalid escape")
	}
	p.pos += 2
	return nil
}

// unicodeEscape reads a \u escape (four hex digits), and the low half when
// the first is a high surrogate.
func (p *jsonParser) unicodeEscape(b *strings.Builder) error {
	r, err := p.hex4(p.pos + 2)
	if err != nil {
		return err
	}
	p.pos += 6
	switch {
	case utf16.IsSurrogate(r) && r < 0xdc00: // high surrogate: a low one must follow
		if p.pos+1 < len(p.data) && p.data[p.pos] == '\\' && p.data[p.pos+1] == 'u' {
			low, err := p.hex4(p.pos + 2)
			if err != nil {
				return err
			}
			if low >= 0xdc00 && low <= 0xdfff {
				b.WriteRune(utf16.DecodeRune(r, low))
				p.pos += 6
				return nil
			}
		}
		return p.notIJSON("lone surrogate escape")
	case utf16.IsSurrogate(r):
		return p.notIJSON("lone surrogate escape")
	default:
		b.WriteRune(r)
		return nil
	}
}

func (p *jsonParser) hex4(at int) (rune, error) {
	if at+4 > len(p.data) {
		return 0, p.syntax("short \\u escape")
	}
	var r rune
	for _, c := range p.data[at : at+4] {
		var d byte
		switch {
		case '0' <= c && c <= '9':
			d = c - '0'
		case 'a' <= c && c <= 'f':
			d = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			d = c - 'A' + 10
		default:
			return 0, p.syntax("invalid \\u escape")
		}
		r = r<<4 | rune(d)
	}
	return r, nil
}

func (p *jsonParser) number() (jsonValue, error) {
	start := p.pos
	digits := func() int {
		n := 0
		for p.pos < len(p.data) && '0' <= p.data[p.pos] && p.data[p.pos] <= '9' {
			p.pos++
			n++
		}
		return n
	}
	if p.data[p.pos] == '-' {
		p.pos++
	}
	switch {
	case p.pos < len(p.data) && p.data[p.pos] == '0':
		p.pos++
	case digits() == 0:
		return jsonValue{}, p.syntax("invalid number")
	}
	if p.pos < len(p.data) && p.data[p.pos] == '.' {
		p.pos++
		if digits() == 0 {
			return jsonValue{}, p.syntax("invalid number fraction")
		}
	}
	if p.pos < len(p.data) && (p.data[p.pos] == 'e' || p.data[p.pos] == 'E') {
		p.pos++
		if p.pos < len(p.data) && (p.data[p.pos] == '+' || p.data[p.pos] == '-') {
			p.pos++
		}
		if digits() == 0 {
			return jsonValue{}, p.syntax("invalid number exponent")
		}
	}
	f, err := strconv.ParseFloat(string(p.data[start:p.pos]), 64)
	if err != nil || math.IsInf(f, 0) {
		p.pos = start
		return jsonValue{}, p.notIJSON("number beyond the IEEE 754 double range")
	}
	return jsonValue{kind: jsonNumber, number: f}, nil
}

func writeCanonical(buf *bytes.Buffer, v jsonValue) {
	switch v.kind {
	case jsonNull:
		buf.WriteString("null")
	case jsonFalse:
		buf.WriteString("false")
	case jsonTrue:
		buf.WriteString("true")
	case jsonNumber:
		buf.WriteString(formatES6(v.number))
	case jsonString:
		writeCanonicalString(buf, v.str)
	case jsonArray:
		buf.WriteByte('[')
		for i, item := range v.items {
			if i > 0 {
				buf.WriteByte(',')
			}
			writeCanonical(buf, item)
		}
		buf.WriteByte(']')
	case jsonObject:
		buf.WriteByte('{')
		for i, m := range v.members {
			if i > 0 {
				buf.WriteByte(',')
			}
			writeCanonicalString(buf, m.name)
			buf.WriteByte(':')
			writeCanonical(buf, m.value)
		}
		buf.WriteByte('}')
	}
}

// writeCanonicalString writes s (valid UTF-8) as RFC 8785 section 3.2.2.2
// says: the two mandatory escapes, the short forms of five control
// characters, \u00xx with lowercase hex for the others, everything else as
// UTF-8.
func writeCanonicalString(buf *bytes.Buffer, s string) {
	const hexDigits = "0123456789abcdef"
	buf.WriteByte('"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch c {
		case '"':
			buf.WriteString(`\"`)
		case '\\':
			buf.WriteString(`\\`)
		case '\b':
			buf.WriteString(`\b`)
		case '\f':
			buf.WriteString(`\f`)
		case '\n':
			buf.WriteString(`\n`)
		case '\r':
			buf.WriteString(`\r`)
		case '\t':
			buf.WriteString(`\t`)
		default:
			if c < 0x20 {
				buf.WriteString(`\u00`)
				buf.WriteByte(hexDigits[c>>4])
				buf.WriteByte(hexDigits[c&0xf])
			} else {
				buf.WriteByte(c)
			}
		}
	}
	buf.WriteByte('"')
}

// formatES6 writes a finite double as ECMAScript's Number::toString does
// (ECMA-262, Number::toString with radix 10): the shortest digits that
// read back as the same double, in plain notation when the decimal
// exponent n satisfies -6 < n <= 21 and in exponential notation otherwise.
// Go's shortest formatting picks the same digits, the one closest to the
// value among the shortest.
func formatES6(f float64) string {
	if f == 0 {
		return "0" // also -0
	}
	sign := ""
	if f < 0 {
		sign, f = "-", -f
	}
	mantissa, exp, _ := strings.Cut(strconv.FormatFloat(f, 'e', -1, 64), "e")
	digits := strings.Replace(mantissa, ".", "", 1)
	e, _ := strconv.Atoi(exp)
	k, n := len(digits), e+1
	switch {
	case k <= n && n <= 21:
		return sign + digits + strings.Repeat("0", n-k)
	case 0 < n && n <= 21:
		return sign + digits[:n] + "." + digits[n:]
	case -6 < n && n <= 0:
		return sign + "0." + strings.Repeat("0", -n) + digits
	}
	out := sign + digits[:1]
	if k > 1 {
		out += "." + digits[1:]
	}
	if n-1 >= 0 {
		return out + "e+" + strconv.Itoa(n-1)
	}
	return out + "e-" + strconv.Itoa(1-n)
}
