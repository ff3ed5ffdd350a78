package routing

import (
	"errors"
	"strings"
)

// Reasons a path is refused by Normalize. Each is a path whose meaning
// depends on who decodes it: the edge would route, announce and record one
// path and an owner could serve another.
var (
	ErrEncodedSlash     = errors.New("an encoded slash (%2F) in a path segment")
	ErrEncodedBackslash = errors.New("a backslash (%5C), which some servers take for a slash")
	ErrEncodedNUL       = errors.New("an encoded NUL (%00)")
	ErrDotSegment       = errors.New(`a "." or ".." segment, plain or percent-encoded`)
	ErrBadEncoding      = errors.New("a malformed percent-encoding")
)

// Normalize returns the one form of an escaped request path (as sent, e.g.
// url.URL.EscapedPath) that the edge routes, decides policy on, records and
// forwards, following RFC 3986 section 6.2.2: percent-encoded unreserved
// characters (ALPHA, DIGIT, "-", ".", "_", "~") are decoded, every other
// percent-encoding keeps its octet with upper-case hex digits. So
// /api/v2/%63ases/cs_1 is /api/v2/cases/cs_1, and /api/cases/cs%3a1 is
// /api/cases/cs%3A1.
//
// It refuses, rather than resolves, what would give a path two readings:
// an encoded "/" (one segment to the edge, two to a server that decodes
// first), a backslash in any form, an encoded NUL, and dot segments ("."
// and "..", plain or encoded): a client resolves dot segments before it
// sends a request (RFC 3986 section 5.2.4), so a path that still has them
// is probing.
func Normalize(escaped string) (string, error) {
	if !strings.ContainsAny(escaped, `%\`) && !hasDotSegment(escaped) {
		return escaped, nil // the common path: nothing to decode or refuse
	}
	var b strings.Builder
	b.Grow(len(escaped))
	for i := 0; i < len(escaped); i++ {
		c := escaped[i]
		switch {
		case c == '\\':
			return "", ErrEncodedBackslash
		case c != '%':
			b.WriteByte(c)
			continue
		}
		if i+2 >= len(escaped) || !isHex(escaped[i+1]) || !isHex(escaped[i+2]) {
			return "", ErrBadEncoding
		}
		octet := unhex(escaped[i+1])<<4 | unhex(escaped[i+2])
		i += 2
		switch {
		case octet == '/':
			return "", ErrEncodedSlash
		case octet == '\\':
			return "", ErrEncodedBackslash
		case octet == 0:
			return "", ErrEncodedNUL
		case unreserved(octet):
			b.WriteByte(octet)
		default:
			const hex = "0123456789ABCDEF"
			b.WriteByte('%')
			b.WriteByte(hex[octet>>4])
			b.WriteByte(hex[octet&0x0f])
		}
	}
	out := b.String()
	if hasDotSegment(out) {
		return "", ErrDotSegment
	}
	return out, nil
}

func hasDotSegment(path string) bool {
	for seg := range strings.SplitSeq(path, "/") {
		if seg == "." || seg == ".." {
			return true
		}
	}
	return false
}

// unreserved is RFC 3986's unreserved set: decoding these never changes
// what a URI means.
func unreserved(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' ||
		c == '-' || c == '.' || c == '_' || c == '~'
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case '0' <= c && c <= '9':
		return c - '0'
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10
	default:
		return c - 'A' + 10
	}
}
